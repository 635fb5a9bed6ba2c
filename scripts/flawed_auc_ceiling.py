"""How well can cell structure alone tell which NAS-Bench-NLP architectures are flawed (status not OK)?

Context for `nasbench analyze features`: the shipped 10-d features reach ROC AUC 0.99 on this task,
ours about 0.95. This script prints, on the same stratified 50/50 splits and with the same XGBoost
classifier (benchmarks.cells.feature_quality.flawed_auc):
- the AUC of the explicit bag of our graph2vec words (sparse counts of every WL label and path word
  seen at least twice): what any embedding of our documents could at best pass on to the classifier;
- the AUC of a duplicate's status predicted from its canonical-form twins (leave one out, only cells
  whose canonical form occurs more than once): how much of "flawed" the structure determines.

    python scripts/flawed_auc_ceiling.py [--benchmark ptb] [--seeds 0,1,2,3,4] [--data-dir DIR]
"""
import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.cells.canonical import benchmark_hashes  # noqa: E402
from benchmarks.cells.feature_quality import flawed_auc  # noqa: E402
from benchmarks.cells.graph2vec import WL_ITERATIONS, cell_document  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402


def word_counts(recipes: list[str]):
    """Sparse [n, vocabulary] counts of the graph2vec words seen in at least two cells."""
    import scipy.sparse as sp

    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, recipe in enumerate(recipes):
        for word in cell_document(recipe, WL_ITERATIONS, paths=True):
            rows.append(i)
            cols.append(vocabulary.setdefault(word, len(vocabulary)))
    matrix = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(recipes), len(vocabulary)))
    seen = np.asarray((matrix > 0).sum(axis=0)).ravel()
    return matrix[:, seen >= 2].tocsr()


def twin_auc(hashes: list, flawed: np.ndarray) -> tuple[float, int]:
    """Leave-one-out AUC of 'flawed' predicted by the flawed share of a cell's canonical twins."""
    from sklearn.metrics import roc_auc_score

    groups = collections.defaultdict(list)
    for row, key in enumerate(hashes):
        if key is not None:
            groups[key].append(row)
    truth, guess = [], []
    for rows in groups.values():
        if len(rows) < 2:
            continue
        for row in rows:
            others = [r for r in rows if r != row]
            truth.append(flawed[row])
            guess.append(flawed[others].mean())
    return float(roc_auc_score(truth, guess)), len(truth)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="ptb")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    benchmark = load_benchmark(args.benchmark, args.data_dir)
    flawed = np.asarray(benchmark.search.status) != "OK"
    seeds = [int(s) for s in args.seeds.split(",")]
    matrix = word_counts(benchmark.search.recipes)
    aucs = [flawed_auc(matrix, flawed, seed) for seed in seeds]
    print(f"bag of graph2vec words ({matrix.shape[1]} words): flawed ROC AUC "
          f"{np.mean(aucs):.3f} ± {np.std(aucs):.3f} over {len(seeds)} splits")
    auc, cells = twin_auc(benchmark_hashes(benchmark.search), flawed)
    print(f"status predicted from canonical twins ({cells} duplicated cells): ROC AUC {auc:.3f}")


if __name__ == "__main__":
    main()
