"""The result record's format: its version, its key order, the settings hash that says which trials are
comparable, the default run label, and the package versions it records. The harness writes records
in this format; `files` reads and checks them (every field: docs/reference/result-format.md)."""
import functools
import hashlib
import json

from optimizers.labels import LABEL_PATTERN, check_label  # noqa: F401  (re-exported: a record's label)

RESULT_FORMAT = "nasbench-trial/2"   # /1: before `best_arch` became `benchmark_best_arch`
SCORED_ORDER = ("format", "benchmark", "algo", "label", "algorithm_source", "workers", "trial", "seed", "budget_s",
                "settings", "settings_hash", "versions", "data_checksum", "scores_checksum", "scored_cells",
                "l_star", "benchmark_best_arch", "n_evaluations", "simulated_time_s", "final_regret",
                "compute_s", "wall_s", "trajectory", "jobs", "max_jobs", "isolated", "table_used_up_s",
                "stopped_at_best_s",
                "objectives", "constraints", "hv_space", "front")


def settings_hash(benchmark: str, algo: str, settings: dict, budget_s: float, workers: int = 1,
                  max_jobs: int | None = None, objectives=(), constraints=()) -> str:
    """Stable hash of everything that defines a trial's outcome except its seed. One worker, no job
    cap, one objective and no constraints hash as before those existed, so earlier result files and
    baselines stay valid."""
    fields = {"benchmark": benchmark, "algo": algo, "settings": settings, "budget_s": budget_s}
    if workers != 1:
        fields["workers"] = int(workers)
    if max_jobs is not None:
        fields["max_jobs"] = int(max_jobs)
    if objectives:
        fields["objectives"] = list(objectives)
    if constraints:
        fields["constraints"] = [str(c) for c in constraints]
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def run_label(algo: str, workers: int = 1) -> str:
    """The default name a run is compared under (and its results folder): `hb`, or `hb@4w` with 4
    workers; `nasbench run --label` sets another."""
    return algo if workers == 1 else f"{algo}@{int(workers)}w"


# the libraries a trial's result can depend on (the searchers' own libraries included: optuna's, syne-tune's,
# DEHB's samplers, moocore's fronts, ifbo's model); those not installed are left out
VERSIONED = ("nasbench", "numpy", "scipy", "xgboost-cpu", "xgboost", "hyperopt", "smac", "ConfigSpace", "gensim",
             "scikit-learn", "torch", "optuna", "syne-tune", "dehb", "moocore", "ifbo")


@functools.lru_cache(maxsize=1)
def _versions() -> tuple:
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for package in VERSIONED:
        try:
            versions.append((package, version(package)))
        except PackageNotFoundError:
            pass
    return tuple(versions)


def package_versions() -> dict:
    """{package: version} of nasbench and the libraries a result depends on (read once per process: the
    installed versions do not change while it runs)."""
    return dict(_versions())
