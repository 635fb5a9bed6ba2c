"""Run one trial of one algorithm on one benchmark and return its self-describing result record."""
import hashlib
import json
import time

import numpy as np

RESULT_FORMAT = "nasbench-trial/2"   # /1: before `best_arch` became `benchmark_best_arch`


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


from optimizers.labels import LABEL_PATTERN, check_label  # noqa: E402,F401  (re-exported)


def settings_suffix(algo: str, overrides: dict | None, benchmark: str | None = None) -> str:
    """'+eta-4' for each setting `overrides` (from --set) moves away from the algorithm's default, in
    name order; '' when none does. Characters a label cannot hold become '_'."""
    import re

    from optimizers.registry import make_algorithm

    if not overrides:
        return ""
    default = make_algorithm(algo, None, benchmark).settings_dict()
    chosen = make_algorithm(algo, overrides, benchmark).settings_dict()
    return "".join(f"+{key}-{re.sub(r'[^A-Za-z0-9._-]', '_', str(chosen[key]))}"
                   for key in sorted(chosen) if chosen[key] != default.get(key))


def default_label(algo: str, overrides: dict | None, benchmark: str | None, workers: int = 1,
                  release: bool = False) -> str:
    """The label of a run without --label: the algorithm's name, '+key-value' for each setting changed
    from its default (so a changed run never shares a name with a default one), '@Kw' for K workers."""
    from optimizers.registry import algorithm_name

    label = run_label(algorithm_name(algo) + settings_suffix(algo, overrides, benchmark), workers) + \
        ("@release" if release else "")
    if len(label) > 64:
        from benchmarks.core.errors import UserError

        raise UserError(f"the settings of {algorithm_name(algo)} make the label '{label[:40]}...' longer than "
                        "64 characters; name the run with --label")
    return check_label(label)


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
    from benchmarks.core.features import features

    return features(benchmark, kind)


def load_scores(benchmark, metric: str | None, split: str = "train"):
    """float64 [n] of the training-free `metric` scored on `split` tokens (cache, else shipped), or None."""
    if metric is None:
        return None
    from benchmarks.proxies import load_scores as cached_scores

    return cached_scores(benchmark, metric, split=split)


def scores_checksum(scores) -> str | None:
    """Fingerprint of the training-free scores a proxy-guided trial read (None for other algorithms):
    a result depends on them, so a rerun must not reuse a file made from another score table."""
    if scores is None:
        return None
    return hashlib.sha256(np.ascontiguousarray(scores, dtype=np.float64).tobytes()).hexdigest()[:16]


def current_scores_checksum(benchmark, algo: str, overrides: dict | None = None) -> str | None:
    """scores_checksum of what a trial of `algo` would read now from the score cache."""
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm(algo, overrides, benchmark.name)
    return scores_checksum(load_scores(benchmark, algorithm.score_metric, algorithm.score_split))


def run_algorithm(search, algorithm, seed: int, budget_s: float, features=None, scores=None, workers: int = 1,
                  max_jobs: int | None = None, objectives=(), constraints=()):
    """Simulate one trial of `algorithm` (an instance, or a registry name with default settings) on the
    searcher's table `search` with `workers` simulated workers and a wall-clock budget of `budget_s`
    simulated seconds; returns the Environment (its `history` holds one point per finished job).
    `objectives`, `constraints`: of a multi-objective or constrained run (see `scoring_problem`)."""
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.registry import make_algorithm

    if isinstance(algorithm, str):
        algorithm = make_algorithm(algorithm, None, search.name)
    objectives, constraints = scoring_problem(search.name, objectives, constraints)
    env = Environment(search, budget_s, objectives)
    run_on(env, algorithm, seed, features, scores, workers, max_jobs, objectives, constraints)
    return env


def scoring_problem(benchmark: str, objectives=(), constraints=()) -> tuple[tuple, tuple]:
    """(objective names, Constraint objects) of a run from names or 'a,b' text and constraint texts or
    objects; () for the default single-objective run (also when only the loss objective is named);
    UserError (one line) for anything the benchmark lacks."""
    from benchmarks.core.constraints import Constraint, parse_constraints
    from benchmarks.core.errors import UserError
    from benchmarks.core.objectives import loss_objective, parse_objectives

    text = objectives if isinstance(objectives, str) else ",".join(objectives or ())
    names = [n.strip() for n in text.split(",") if n.strip()]
    loss = loss_objective(benchmark)
    if names == [loss]:
        names = []
    elif len(names) == 1:
        parse_objectives(f"{names[0]},{loss}", benchmark)         # an unknown name: that one line
        raise UserError(f"the single objective on '{benchmark}' is '{loss}'; to budget '{names[0]}' use "
                        f"--constraint (e.g. '{names[0]}<=...'), to search both --objectives {loss},{names[0]}")
    names = parse_objectives(",".join(names), benchmark) if names else ()
    if names:
        from benchmarks.core.pareto import require_moocore

        require_moocore()
    texts = [c for c in (constraints or ()) if not isinstance(c, Constraint)]
    parsed = tuple(c for c in (constraints or ()) if isinstance(c, Constraint)) + parse_constraints(texts, benchmark)
    return names, tuple(dict.fromkeys(parsed))


def job_log(history) -> dict:
    """Per finished job, parallel to the trajectory: when a worker took it (simulated seconds), which
    worker, the checkpoint it continued from, and its non-training overhead (seconds)."""
    return {"start_s": list(history.start_s), "worker": list(history.worker),
            "from_epoch": list(history.from_epoch), "overhead_s": list(history.overhead_s)}


def run_trial(benchmark_name: str, algo: str, trial: int, seed: int, budget_s: float,
              overrides: dict | None = None, data_dir=None, workers: int = 1, label: str | None = None,
              max_jobs: int | None = None, isolate: bool = False, objectives=(), constraints=()) -> dict:
    """Run trial `trial` (seeded with `seed`) of the algorithm `algo` (a built-in name, a plugin's name or
    spec) with `workers` simulated workers and return the result record (JSON-ready), compared under
    `label` (default `run_label(name, workers)`); `objectives`, `constraints`: see `scoring_problem`."""
    from benchmarks.core.registry import load_benchmark
    from optimizers.registry import algorithm_name, algorithm_source, make_algorithm

    # no test losses in this process while the algorithm runs: score_record reads them afterwards
    benchmark = load_benchmark(benchmark_name, data_dir, test_losses=False)
    algorithm = isolated_if(isolate, algo, overrides, benchmark_name, make_algorithm(algo, overrides, benchmark_name))
    return trial_record(benchmark, algorithm, algorithm_name(algo), algorithm_source(algo), trial, seed, budget_s,
                        workers, label, max_jobs=max_jobs, objectives=objectives, constraints=constraints)


def isolated_if(isolate: bool, algo: str, overrides, benchmark_name: str, algorithm):
    """`algorithm` itself, or (`isolate`) a stand-in running it in its own process (harness.isolation)."""
    if not isolate:
        return algorithm
    from nasbench_cli.harness.isolation import IsolatedAlgorithm

    return IsolatedAlgorithm(algo, overrides or {}, benchmark_name, algorithm)


LOAD = object()   # trial_record's default for features and scores: read them from the caches here


def trial_record(benchmark, algorithm, name: str, source: dict | None, trial: int, seed: int, budget_s: float,
                 workers: int = 1, label: str | None = None, features=LOAD, scores=LOAD,
                 max_jobs: int | None = None, objectives=(), constraints=()) -> dict:
    """Simulate one trial of the algorithm instance `algorithm` on a loaded `benchmark` and return its
    result record (format `RESULT_FORMAT`, every field documented in docs/result-format.md). `name`: the
    algorithm's name in results; `source`: where its class came from (None for a built-in one).
    `features`, `scores`: the algorithm's feature matrix and training-free scores when the caller already
    has them (a Dask worker gets them from the client); by default they are read from the caches.
    `max_jobs`: start at most this many jobs (`nasbench run --budget release`); recorded only when set.
    A benchmark loaded without test losses gets them only after the algorithm has finished.
    `objectives`, `constraints`: a multi-objective or constrained run (`scoring_problem`)."""
    unscored = unscored_record(benchmark, algorithm, name, source, trial, seed, budget_s, workers, label,
                               features, scores, max_jobs, objectives, constraints)
    return score_record(unscored, benchmark)


def unscored_record(benchmark, algorithm, name: str, source: dict | None, trial: int, seed: int, budget_s: float,
                    workers: int = 1, label: str | None = None, features=LOAD, scores=LOAD,
                    max_jobs: int | None = None, objectives=(), constraints=()) -> dict:
    """A trial's record before scoring (`score_record`): everything but what test losses give (regret,
    L*, the benchmark's best architecture), plus its `history`. Reads nothing of the test losses, so
    it runs where there are none (a benchmark loaded without them, a Dask worker)."""
    feats = load_features(benchmark, algorithm.feature_kind) if features is LOAD else features
    scores = load_scores(benchmark, algorithm.score_metric, algorithm.score_split) if scores is LOAD else scores
    started = time.process_time()
    wall_started = time.perf_counter()
    objectives, constraints = scoring_problem(benchmark.name, objectives, constraints)
    check_objectives_fit(algorithm, name, objectives)
    env = run_algorithm(benchmark.search, algorithm, seed, budget_s, feats, scores, workers, max_jobs,
                        objectives, constraints)
    compute_s = time.process_time() - started
    wall_s = time.perf_counter() - wall_started
    settings = algorithm.settings_dict()
    record = {
        "format": RESULT_FORMAT,
        "benchmark": benchmark.name,
        "algo": name,
        "label": label or run_label(name, workers),
        "algorithm_source": source,
        "workers": int(workers),
        "trial": trial,
        "seed": seed,
        "budget_s": budget_s,
        "settings": settings,
        "settings_hash": settings_hash(benchmark.name, name, settings, budget_s, workers, max_jobs,
                                       objectives, constraints),
        "versions": package_versions(),
        "data_checksum": benchmark.checksum,
        "scores_checksum": scores_checksum(scores),
        "scored_cells": None if scores is None else int((~np.isnan(scores)).sum()),
        "simulated_time_s": env.time_s,
        "compute_s": compute_s,
        "wall_s": wall_s,
        "history": env.history,
    }
    if max_jobs is not None:
        record["max_jobs"] = int(max_jobs)
    if objectives:
        record["objectives"] = list(objectives)
    if constraints:
        record["constraints"] = [str(c) for c in constraints]
    if type(algorithm).__name__ == "IsolatedAlgorithm":
        record["isolated"] = True
    return record


SCORED_ORDER = ("format", "benchmark", "algo", "label", "algorithm_source", "workers", "trial", "seed", "budget_s",
                "settings", "settings_hash", "versions", "data_checksum", "scores_checksum", "scored_cells",
                "l_star", "benchmark_best_arch", "n_evaluations", "simulated_time_s", "final_regret",
                "compute_s", "wall_s", "trajectory", "jobs", "max_jobs", "isolated", "table_used_up_s",
                "objectives", "constraints", "hv_space", "front")


def score_record(unscored: dict, benchmark) -> dict:
    """The result record of an `unscored_record`: its regret trajectory, L* and the benchmark's best
    architecture from `benchmark`'s test losses (read now if it was loaded without them, then dropped)."""
    from benchmarks.core.registry import load_test_losses
    from benchmarks.core.regret import final_regret, trajectory

    scoring = load_test_losses(benchmark)
    history = unscored["history"]
    traj = trajectory(scoring, history)
    fields = dict(unscored, l_star=scoring.l_star, benchmark_best_arch=scoring.best_id)
    if unscored.get("objectives") or unscored.get("constraints"):
        fields.update(front_fields(scoring, unscored, traj))
    fields.update(n_evaluations=len(traj["time_s"]), final_regret=final_regret(traj), trajectory=traj,
                  jobs=job_log(history))
    used_up = table_used_up_s(history, scoring.search.n)
    if used_up is not None:
        fields["table_used_up_s"] = used_up
    return {key: fields[key] for key in SCORED_ORDER if key in fields}


def check_problem(benchmark, objectives, constraints) -> None:
    """UserError (one line) if no architecture of a loaded `benchmark` satisfies the constraints."""
    from benchmarks.core.objectives import loss_objective
    from benchmarks.core.pareto import objective_space
    from benchmarks.core.registry import load_test_losses

    objective_space(load_test_losses(benchmark), objectives or (loss_objective(benchmark.name),), constraints)


def check_objectives_fit(algorithm, name: str, objectives) -> None:
    """UserError (one line) if a multi-objective algorithm is asked to search one objective."""
    from benchmarks.core.errors import UserError

    if getattr(algorithm, "multi_objective", False) and not objectives:
        raise UserError(f"'{name}' is a multi-objective algorithm: name two or three objectives with "
                        "--objectives (e.g. logppl,params)")


def front_fields(scoring, record: dict, traj: dict) -> dict:
    """A multi-objective or constrained trial's scores (replacing `traj`'s regret and incumbents in
    place): HV regret, or regret against the best feasible architecture, per job (front_regret); L*
    and the best architecture of the feasible table; with several objectives the normalisation
    (`hv_space`) and the final front ([recepie_id, epoch] pairs, lowest test loss first)."""
    from benchmarks.core.front_regret import front_trajectory
    from benchmarks.core.objectives import loss_objective
    from benchmarks.core.pareto import objective_space

    objectives, constraints = scoring_problem(scoring.name, record.get("objectives") or (), record.get("constraints") or ())
    names = objectives or (loss_objective(scoring.name),)
    space = objective_space(scoring, names, constraints)
    rows = scoring.search.indices_of(traj["arch"])
    scored = front_trajectory(scoring, space, rows, traj["epochs"])
    ids = scoring.search.ids
    traj["regret"] = scored["regret"]
    traj["incumbent"] = [None if inc is None else int(ids[inc[0]]) for inc in scored["incumbent"]]
    traj["incumbent_epoch"] = [None if inc is None else int(inc[1]) for inc in scored["incumbent"]]
    best = int(np.argmin(space.front_points[:, space.loss_column]))
    fields = {"l_star": scored["l_star"], "benchmark_best_arch": int(ids[space.front_rows[best]])}
    if objectives:
        fields["hv_space"] = space.record_fields()
        fields["front"] = [[int(ids[row]), int(epoch)] for row, epoch in scored["front"]]
    return fields


def table_used_up_s(history, n_architectures: int) -> float | None:
    """The simulated second at which the trial started its last untried architecture, when it started
    every one of the table's (later jobs could only continue trained ones); None if it never did. A
    result past that hour measures the table's size as much as the algorithm."""
    seen = set()
    for arch, start_s in zip(history.arch, history.start_s):
        if arch not in seen:
            seen.add(arch)
            if len(seen) == n_architectures:
                return float(start_s)
    return None
