"""Trajectories of all ten algorithms recorded before the ask/tell port (commit 58627cc), and the
code that reproduces them today: `python tests/port_fixture.py` rewrites `tests/data/pre_port_trajectories.json.gz`
(only ever run it to record a reference; the test compares against the committed file).

Each case is (algorithm, seed) on the real PTB table: 1000 simulated hours for the cheap algorithms, 300
for the model-based ones (enough for BO's refits, TPE's model and SMAC's after its 100-point initial
design, at a few seconds a case); prs and phb read a fixed
synthetic score vector (a uniform random 3,000-cell subset scored N(0, 1), seed 0), so the fixture does
not need the training-free score cache.
"""
import gzip
import json
import sys
from pathlib import Path

import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np

FIXTURE = Path(__file__).parent / "data" / "pre_port_trajectories.json.gz"
ALGORITHMS = ("rs50e", "rs10e", "hb", "bo10d", "bo50d", "re", "tpe", "smac", "prs", "phb")
SEEDS = (0, 1, 2)
BUDGET_HOURS = {"rs50e": 1000, "rs10e": 1000, "hb": 1000, "re": 1000, "prs": 1000, "phb": 1000,
                "bo10d": 300, "bo50d": 300, "tpe": 300, "smac": 300}
# (algorithm, seed, hours): each algorithm at its budget above, and prs / phb also at 200 h, where the
# budget (not the 3,000 scored cells) ends them, with scoring overhead charged right before the end.
CASES = [(a, s, BUDGET_HOURS[a]) for a in ALGORITHMS for s in SEEDS] + [(a, s, 200) for a in ("prs", "phb") for s in SEEDS]


def synthetic_scores(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    scores = np.full(n, np.nan)
    rows = rng.choice(n, 3000, replace=False)
    scores[rows] = rng.normal(size=3000)
    return scores


def inputs_for(benchmark, algo: str):
    """(features, scores) the algorithm reads in the fixture."""
    from benchmarks.core.features import features as load_features
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm(algo)
    feats = None if algorithm.feature_kind is None else load_features(benchmark, algorithm.feature_kind)
    scores = None if algorithm.score_metric is None else synthetic_scores(benchmark.search.n)
    return feats, scores


def case_key(algo: str, seed: int, hours: float) -> str:
    return f"{algo}/{seed}/{hours:g}h"


def record(benchmark, trajectory_of) -> dict:
    """{case: {"time_s": final simulated time, "trajectory": ...}} using `trajectory_of(algo, seed,
    budget_s, features, scores) -> (trajectory dict, simulated seconds)`."""
    cases, inputs = {}, {}
    for algo, seed, hours in CASES:
        if algo not in inputs:
            inputs[algo] = inputs_for(benchmark, algo)
        traj, time_s = trajectory_of(algo, seed, hours * 3600.0, *inputs[algo])
        cases[case_key(algo, seed, hours)] = {"time_s": time_s, "trajectory": traj}
    return cases


def replay_cases(cases, data_dir=None) -> dict:
    """`record`'s entries for `cases` only, computed in this process; the searcher sees the table without
    test losses."""
    from benchmarks.core.regret import trajectory
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.trial import run_algorithm
    from no_test_table import NoTestTable

    benchmark = load_benchmark("ptb", data_dir)
    out, inputs = {}, {}
    for algo, seed, hours in cases:
        if algo not in inputs:
            inputs[algo] = inputs_for(benchmark, algo)
        env = run_algorithm(NoTestTable(benchmark.search), algo, seed, hours * 3600.0, *inputs[algo])
        out[case_key(algo, seed, hours)] = {"time_s": env.time_s, "trajectory": trajectory(benchmark, env.history)}
    return out


def load_fixture() -> dict:
    with gzip.open(FIXTURE, "rt") as handle:
        return json.load(handle)


def write_fixture(cases: dict, commit: str) -> None:
    with gzip.GzipFile(FIXTURE, "wb", mtime=0) as handle:
        handle.write(json.dumps({"commit": commit, "cases": cases}).encode())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.core.regret import trajectory
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.trial import run_algorithm   # the harness's own single-trial driver

    ptb = load_benchmark("ptb")

    def trajectory_of(algo, seed, budget_s, feats, scores):
        env = run_algorithm(ptb.search, algo, seed, budget_s, features=feats, scores=scores)
        return trajectory(ptb, env.history), env.time_s

    write_fixture(record(ptb, trajectory_of), commit="regenerated")
    print(f"wrote {FIXTURE}")
