"""Run one trial of one algorithm on one benchmark and return its self-describing result record."""
import hashlib
import json
import time

import numpy as np

RESULT_FORMAT = "nasbench-trial/1"


def settings_hash(benchmark: str, algo: str, settings: dict, budget_s: float) -> str:
    """Stable hash of everything that defines a trial's outcome except its seed."""
    text = json.dumps({"benchmark": benchmark, "algo": algo, "settings": settings, "budget_s": budget_s},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def package_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("nasbench", "numpy", "scipy", "xgboost-cpu", "xgboost", "hyperopt", "smac",
                    "ConfigSpace", "gensim", "scikit-learn", "torch"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return versions


def load_features(benchmark, kind: str | None):
    if kind is None:
        return None
    from benchmarks.features import features

    return features(benchmark, kind)


def load_scores(benchmark, metric: str | None):
    if metric is None:
        return None
    from benchmarks.proxies import load_scores as cached_scores

    return cached_scores(benchmark, metric)


def run_trial(benchmark_name: str, algo: str, trial: int, seed: int, budget_s: float,
              overrides: dict | None = None, data_dir=None) -> dict:
    """Run trial `trial` (seeded with `seed`) and return the result record (JSON-ready)."""
    from benchmarks.environment import BudgetExhausted, Environment
    from benchmarks.regret import final_regret, trajectory
    from benchmarks.registry import load_benchmark
    from optimizers.base import SearchInputs
    from optimizers.registry import make_algorithm

    benchmark = load_benchmark(benchmark_name, data_dir)
    algorithm = make_algorithm(algo, overrides)
    feats = load_features(benchmark, algorithm.feature_kind)
    scores = load_scores(benchmark, algorithm.score_metric)
    env = Environment(benchmark.search, budget_s)
    started = time.process_time()
    wall_started = time.perf_counter()
    try:
        algorithm.run(SearchInputs(env=env, rng=np.random.default_rng(seed), seed=seed, features=feats,
                                     scores=scores))
    except BudgetExhausted:
        pass
    compute_s = time.process_time() - started
    settings = algorithm.settings_dict()
    traj = trajectory(benchmark, env.history)
    return {
        "format": RESULT_FORMAT,
        "benchmark": benchmark_name,
        "algo": algo,
        "trial": trial,
        "seed": seed,
        "budget_s": budget_s,
        "settings": settings,
        "settings_hash": settings_hash(benchmark_name, algo, settings, budget_s),
        "versions": package_versions(),
        "data_checksum": benchmark.checksum,
        "l_star": benchmark.l_star,
        "best_arch": benchmark.best_id,
        "n_evaluations": len(traj["time_s"]),
        "simulated_time_s": env.time_s,
        "final_regret": final_regret(traj),
        "compute_s": compute_s,
        "wall_s": time.perf_counter() - wall_started,
        "trajectory": traj,
    }
