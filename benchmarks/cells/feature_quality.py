"""How informative a feature matrix is, as in section 4.1 of the NAS-Bench-NLP paper.

On random 50/50 splits (one per seed; stratified by status for the classifier), with XGBoost at
its default settings:
- `flawed_auc`: ROC AUC of a classifier of flawed architectures (status != 'OK');
- `r2_all`: R^2 of a regressor of the final test log-perplexity of the OK architectures;
- `r2_le6`: the same, fitted and scored only on OK architectures with final test log-perplexity <= 6.
This is a harness-side analysis: it reads test losses, which a searcher never sees.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from benchmarks.core.errors import UserError

METRICS = {
    "flawed_auc": "ROC AUC, classifier of flawed architectures (status != OK)",
    "r2_all": "R^2, regressor of final test log-perplexity, OK architectures",
    "r2_le6": "R^2, same regressor on OK architectures with test log-perplexity <= 6",
}
PAPER = {"flawed_auc": 0.98, "r2_all": 0.012, "r2_le6": 0.24}   # the paper's figures, its 10-d features
LOW_LOSS_MAX = 6.0        # log-perplexity bound of the `r2_le6` subset
DEFAULT_SEEDS = (0, 1, 2, 3, 4)


def half_split(rows: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows` shuffled with `seed` and cut in two halves (train, test)."""
    shuffled = np.random.default_rng(seed).permutation(rows)
    half = len(shuffled) // 2
    return shuffled[:half], shuffled[half:]


def stratified_half_split(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, test): each class of bool `labels` split in halves, so both sides hold both."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for value in (False, True):
        rows = rng.permutation(np.flatnonzero(labels == value))
        half = len(rows) // 2
        train.append(rows[:half])
        test.append(rows[half:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def _xgb(kind: str, seed: int, n_jobs: int):
    import xgboost

    cls = xgboost.XGBClassifier if kind == "classifier" else xgboost.XGBRegressor
    return cls(random_state=seed, n_jobs=n_jobs, tree_method="hist")


def flawed_auc(matrix: np.ndarray, flawed: np.ndarray, seed: int, n_jobs: int = 1) -> float:
    """ROC AUC of an XGBoost classifier of `flawed` (bool [n]) from `matrix` [n, d], split of `seed`."""
    from sklearn.metrics import roc_auc_score

    flawed = np.asarray(flawed, dtype=bool)
    if flawed.sum() < 2 or (~flawed).sum() < 2:
        raise UserError("the flawed-architecture check needs at least 2 flawed and 2 OK architectures")
    train, test = stratified_half_split(flawed, seed)
    model = _xgb("classifier", seed, n_jobs).fit(matrix[train], flawed[train])
    return float(roc_auc_score(flawed[test], model.predict_proba(matrix[test])[:, 1]))


def quality_scores(matrix: np.ndarray, flawed: np.ndarray, final_test_loss: np.ndarray, seed: int,
                   n_jobs: int = 1) -> dict[str, float]:
    """The three metrics of `matrix` [n, d] on the split of `seed`.

    `flawed`: bool [n]; `final_test_loss`: float [n] log-perplexity (NaN where none). Regression
    uses the non-flawed rows with a finite final test loss.
    """
    from sklearn.metrics import r2_score

    matrix = np.asarray(matrix, dtype=np.float64)
    flawed = np.asarray(flawed, dtype=bool)
    if matrix.ndim != 2 or matrix.shape[0] != len(flawed) or len(final_test_loss) != len(flawed):
        raise UserError(f"feature matrix {matrix.shape} does not match {len(flawed)} architectures")
    scores = {"flawed_auc": flawed_auc(matrix, flawed, seed, n_jobs)}
    ok = np.flatnonzero(~flawed & np.isfinite(final_test_loss))
    for name, rows in (("r2_all", ok), ("r2_le6", ok[final_test_loss[ok] <= LOW_LOSS_MAX])):
        if len(rows) < 4:
            raise UserError(f"the {name} check needs at least 4 OK architectures with a finite test loss")
        train, test = half_split(rows, seed)
        model = _xgb("regressor", seed, n_jobs).fit(matrix[train], final_test_loss[train])
        scores[name] = float(r2_score(final_test_loss[test], model.predict(matrix[test])))
    return scores


def feature_quality(benchmark, kinds: Iterable[str], seeds: Iterable[int] = DEFAULT_SEEDS, n_jobs: int = 1,
                    progress: Callable[[str, int], None] | None = None) -> dict:
    """Per feature kind and metric: mean, std (population) and per-seed values over the splits.

    `progress(kind, seed)` is called before each split is scored.
    """
    from benchmarks.core.features import check_kind, features

    kinds, seeds = [check_kind(k) for k in kinds], [int(s) for s in seeds]
    if not seeds:
        raise UserError("feature quality needs at least one seed")
    flawed = np.asarray(benchmark.search.status) != "OK"
    target = np.asarray(benchmark.final_test_loss, dtype=np.float64)
    result = {}
    for kind in kinds:
        matrix = features(benchmark, kind)
        per_seed = []
        for seed in seeds:
            if progress is not None:
                progress(kind, seed)
            per_seed.append(quality_scores(matrix, flawed, target, seed, n_jobs))
        result[kind] = {
            metric: {"mean": float(np.mean(values)), "std": float(np.std(values)), "values": values}
            for metric in METRICS for values in [[s[metric] for s in per_seed]]}
    return {"benchmark": benchmark.name, "seeds": seeds, "metrics": METRICS, "paper": PAPER, "kinds": result}


def random_walk_documents(recipes: list[str], seed: int, walks: int = 20, steps: int = 10) -> list[list[str]]:
    """The documents of the NAS-Bench-NLP release's embedding notebook (make_arch_embeddings.ipynb):
    per cell, `walks` random walks of `steps` steps on the cell graph with both edge directions,
    as node roles (x, node, h_prev, h_new) and edge labels (op of the consuming node, or rev_op)."""
    import json

    def role(name: str) -> str:
        for kind in ("node", "h_prev", "h_new"):
            if kind in name:
                return kind
        return name if name == "x" else "node"

    rng = np.random.default_rng(seed)
    documents = []
    for recipe in recipes:
        cell = json.loads(recipe) if isinstance(recipe, str) else recipe
        adjacent: dict[str, list[tuple[str, str]]] = {}
        for name, node in cell.items():
            for src in node["input"]:
                adjacent.setdefault(name, []).append((src, node["op"]))
                adjacent.setdefault(src, []).append((name, "rev_" + node["op"]))
        nodes = list(adjacent)
        draws = rng.random((walks, steps + 1))
        words = []
        for walk in range(walks):
            node = nodes[int(draws[walk, 0] * len(nodes))]
            for step in range(steps):
                nxt, label = adjacent[node][int(draws[walk, step + 1] * len(adjacent[node]))]
                words += [role(node), label]
                node = nxt
            words += [role(node), "."]
        documents.append(words)
    return documents


def training_order_effect(benchmark, epochs: int = 10, dims: int = 10, seeds: Iterable[int] = (0, 1),
                          n_jobs: int = 1) -> dict:
    """Flawed ROC AUC of the release's embedding recipe (random-walk documents, PV-DM doc2vec with
    hierarchical softmax, as in make_arch_embeddings.ipynb) trained twice, differing only in the
    order of the documents: all flawed cells first (as the release trained the shipped features)
    versus a seeded shuffle. A large gap means the order, not the structure, separates the classes.
    Takes a few minutes for PTB (two trainings of `epochs` epochs over ~6M words each).
    """
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    from benchmarks.cells.graph2vec import stable_hash

    seeds = [int(s) for s in seeds]
    flawed = np.asarray(benchmark.search.status) != "OK"
    documents = random_walk_documents(benchmark.search.recipes, seed=0)
    orders = {"flawed-first": np.concatenate([np.flatnonzero(flawed), np.flatnonzero(~flawed)]),
              "shuffled": np.random.default_rng(0).permutation(len(documents))}
    result = {}
    for name, order in orders.items():
        tagged = [TaggedDocument(documents[i], [int(i)]) for i in order]
        model = Doc2Vec(vector_size=dims, window=3, dm=1, hs=1, negative=0, min_count=0, workers=1,
                        seed=0, epochs=epochs, hashfxn=stable_hash)
        model.build_vocab(tagged)
        model.train(tagged, total_examples=len(tagged), epochs=epochs)
        matrix = np.asarray([model.dv[i] for i in range(len(documents))], dtype=np.float64)
        values = [flawed_auc(matrix, flawed, seed, n_jobs) for seed in seeds]
        result[name] = {"mean": float(np.mean(values)), "std": float(np.std(values)), "values": values}
    return {"epochs": epochs, "dims": dims, "seeds": seeds, "flawed_auc": result}
