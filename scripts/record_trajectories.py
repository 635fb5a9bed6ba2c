"""Record every built-in algorithm's trajectories (2 seeds, ptb, wt2 and bert) to compare a refactor.

    python scripts/record_trajectories.py before.json.gz       # on the old commit
    python scripts/record_trajectories.py after.json.gz        # on the new one
    python scripts/record_trajectories.py --compare before.json.gz after.json.gz

Each case is (benchmark, algorithm, seed) run in this process at the budget below; what is recorded is
everything a trial's outcome consists of: the trajectory, the job log, the settings, the simulated
time and the final regret (not the CPU and wall times). The proxy-reading algorithms (prs, phb, lcbo)
read a fixed synthetic score vector (uniform random 30% of the cells scored N(0, 1), seed 0), so no
training-free score cache is needed. `--compare` prints the cases that differ and exits 1 if any does.
"""
import argparse
import gzip
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import nasbench  # noqa: E402,F401  (imports nasbench's own packages first, and before numpy: it pins the BLAS kernels)
import numpy as np  # noqa: E402

CELL_ALGORITHMS = ("rs50e", "rs10e", "hb", "asha", "hb-release", "ahb", "bo10d", "bo50d", "re", "tpe", "smac",
                   "prs", "phb", "lcbo", "optuna", "dehb", "smac-mf")
BERT_ALGORITHMS = ("rs", "bo", "re", "tpe", "smac", "optuna")      # the old bert-* names are refused now
SEEDS = (0, 1)
MODEL_BASED = {"bo10d", "bo50d", "tpe", "smac", "optuna", "dehb", "smac-mf", "lcbo"}
HOURS = {"ptb": lambda algo: 300.0 if algo in MODEL_BASED else 1000.0, "wt2": lambda algo: 200.0,
         "bert": lambda algo: 36.0}
KEYS = ("trajectory", "jobs", "settings", "simulated_time_s", "final_regret", "n_evaluations", "settings_hash",
        "l_star", "benchmark_best_arch", "algo", "label")


def synthetic_scores(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    scores = np.full(n, np.nan)
    rows = rng.choice(n, int(0.3 * n), replace=False)
    scores[rows] = rng.normal(size=len(rows))
    return scores


def _harness():
    try:
        from nasbench_cli.harness.trial import trial_record
    except ImportError:
        from nasbench_cli.harness.trial import trial_record
    return trial_record


def cases(only=None):
    for benchmark in ("ptb", "wt2", "bert"):
        for algo in (BERT_ALGORITHMS if benchmark == "bert" else CELL_ALGORITHMS):
            if only and algo not in only:
                continue
            for seed in SEEDS:
                yield benchmark, algo, seed


def record(only=None) -> dict:
    from optimizers.registry import algorithm_name, algorithm_source, make_algorithm

    trial_record = _harness()
    out = {}
    for benchmark_name, algo, seed in cases(only):
        benchmark = nasbench.load_benchmark(benchmark_name)
        algorithm = make_algorithm(algo, None, benchmark_name)
        kwargs = {}
        if algorithm.score_metric is not None:
            kwargs["scores"] = synthetic_scores(benchmark.search.n)
        started = time.perf_counter()
        rec = trial_record(benchmark, algorithm, algorithm_name(algo), algorithm_source(algo), seed, seed,
                           HOURS[benchmark_name](algo) * 3600.0, **kwargs)
        key = f"{benchmark_name}/{algo}/{seed}"
        out[key] = {k: rec.get(k) for k in KEYS}
        print(f"{key}: {rec['n_evaluations']} jobs, regret {rec['final_regret']}, "
              f"{time.perf_counter() - started:.1f} s", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--only", help="comma list of algorithms")
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(gzip.open(f, "rt").read()) for f in args.files[:2])
        differ = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        for key in differ:
            print(f"differs: {key}")
        print(f"{len(set(a) & set(b)) - len([k for k in differ if k in a and k in b])} identical, "
              f"{len(differ)} differ")
        return 1 if differ else 0
    data = record(args.only.split(",") if args.only else None)
    with gzip.open(args.files[0], "wt") as handle:
        handle.write(json.dumps(data, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
