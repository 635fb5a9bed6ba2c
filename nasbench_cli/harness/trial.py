"""Run one trial of one algorithm on one benchmark and return its self-describing result record."""
import hashlib
import time

import numpy as np

from benchmarks.core.problem import scoring_problem
from nasbench_cli.results.record import RESULT_FORMAT, check_label, package_versions, run_label, settings_hash
from nasbench_cli.results.scoring import score_record


def settings_suffix(algo: str, overrides: dict | None, benchmark: str | None = None) -> str:
    """'+eta-4' for each setting `overrides` (from --set) moves away from the algorithm's default, in
    name order; '' when none does. Characters a label cannot hold become '_'."""
    import dataclasses
    import re

    from optimizers.registry import make_algorithm

    if not overrides:
        return ""
    default = make_algorithm(algo, None, benchmark).settings_dict()
    algorithm = make_algorithm(algo, overrides, benchmark)
    chosen = algorithm.settings_dict()
    settable = {f.name for f in dataclasses.fields(algorithm.settings)} if dataclasses.is_dataclass(
        getattr(algorithm, "settings", None)) else set(chosen)   # not what is derived (ftpfn's weights_sha256)
    return "".join(f"+{key}-{re.sub(r'[^A-Za-z0-9._-]', '_', str(chosen[key]))}"
                   for key in sorted(chosen) if key in settable and chosen[key] != default.get(key))


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
                  max_jobs: int | None = None, objectives=(), constraints=(), stop_at_best: bool = False):
    """Simulate one trial of `algorithm` (an instance, or a registry name with default settings) on the
    searcher's table `search` with `workers` simulated workers and a wall-clock budget of `budget_s`
    simulated seconds; returns the Environment (its `history` holds one point per finished job).
    `objectives`, `constraints`: of a multi-objective or constrained run (see `scoring_problem`);
    `stop_at_best`: end once the incumbent is the table's best by validation (`simulator.simulate`)."""
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.registry import make_algorithm

    if isinstance(algorithm, str):
        algorithm = make_algorithm(algorithm, None, search.name)
    objectives, constraints = scoring_problem(search.name, objectives, constraints)
    env = Environment(search, budget_s, objectives)
    run_on(env, algorithm, seed, features, scores, workers, max_jobs, objectives, constraints, stop_at_best)
    return env


def run_trial(benchmark_name: str, algo: str, trial: int, seed: int, budget_s: float,
              overrides: dict | None = None, data_dir=None, workers: int = 1, label: str | None = None,
              max_jobs: int | None = None, isolate: bool = False, objectives=(), constraints=(),
              stop_at_best: bool = False) -> dict:
    """Run trial `trial` (seeded with `seed`) of the algorithm `algo` (a built-in name, a plugin's name or
    spec) with `workers` simulated workers and return the result record (JSON-ready), compared under
    `label` (default `run_label(name, workers)`); `objectives`, `constraints`: see `scoring_problem`;
    `stop_at_best`: see `unscored_record`."""
    from benchmarks.core.registry import load_benchmark
    from optimizers.registry import algorithm_name, algorithm_source, make_algorithm

    # no test losses in this process while the algorithm runs: score_record reads them afterwards
    benchmark = load_benchmark(benchmark_name, data_dir, test_losses=False)
    algorithm = isolated_if(isolate, algo, overrides, benchmark_name, make_algorithm(algo, overrides, benchmark_name))
    return trial_record(benchmark, algorithm, algorithm_name(algo), algorithm_source(algo), trial, seed, budget_s,
                        workers, label, max_jobs=max_jobs, objectives=objectives, constraints=constraints,
                        stop_at_best=stop_at_best)


def run_trial_spec(spec) -> dict:
    """Run one trial of a run (`run_description.TrialSpec`: the run's description, the algorithm and the
    trial's number) and return its result record; what a worker process runs."""
    return run_trial(spec.benchmark, spec.algo, spec.trial, spec.seed, spec.budget_s, dict(spec.overrides),
                     spec.run.data_dir, spec.workers, spec.label or None, spec.max_jobs, spec.isolate,
                     spec.objectives, spec.constraints, spec.stop_at_best)


def isolated_if(isolate: bool, algo: str, overrides, benchmark_name: str, algorithm):
    """`algorithm` itself, or (`isolate`) a stand-in running it in its own process (harness.isolation)."""
    if not isolate:
        return algorithm
    from nasbench_cli.harness.isolation import IsolatedAlgorithm

    return IsolatedAlgorithm(algo, overrides or {}, benchmark_name, algorithm)


LOAD = object()   # trial_record's default for features and scores: read them from the caches here


def trial_record(benchmark, algorithm, name: str, source: dict | None, trial: int, seed: int, budget_s: float,
                 workers: int = 1, label: str | None = None, features=LOAD, scores=LOAD,
                 max_jobs: int | None = None, objectives=(), constraints=(), stop_at_best: bool = False) -> dict:
    """Simulate one trial of the algorithm instance `algorithm` on a loaded `benchmark` and return its
    result record (format `RESULT_FORMAT`, every field documented in docs/reference/result-format.md). `name`: the
    algorithm's name in results; `source`: where its class came from (None for a built-in one).
    `features`, `scores`: the algorithm's feature matrix and training-free scores when the caller already
    has them (a Dask worker gets them from the client); by default they are read from the caches.
    `max_jobs`: start at most this many jobs (`nasbench run --budget release`); recorded only when set.
    A benchmark loaded without test losses gets them only after the algorithm has finished.
    `objectives`, `constraints`: a multi-objective or constrained run (`scoring_problem`)."""
    unscored = unscored_record(benchmark, algorithm, name, source, trial, seed, budget_s, workers, label,
                               features, scores, max_jobs, objectives, constraints, stop_at_best)
    return score_record(unscored, benchmark)


def unscored_record(benchmark, algorithm, name: str, source: dict | None, trial: int, seed: int, budget_s: float,
                    workers: int = 1, label: str | None = None, features=LOAD, scores=LOAD,
                    max_jobs: int | None = None, objectives=(), constraints=(), stop_at_best: bool = False) -> dict:
    """A trial's record before scoring (`score_record`): everything but what test losses give (regret,
    L*, the benchmark's best architecture), plus its `history`. Reads nothing of the test losses, so
    it runs where there are none (a benchmark loaded without them, a Dask worker). `stop_at_best`: end
    the trial once its incumbent is the table's best by validation (a single-objective, unconstrained
    run only: its regret cannot change after that), recorded as `stopped_at_best_s`."""
    feats = load_features(benchmark, algorithm.feature_kind) if features is LOAD else features
    scores = load_scores(benchmark, algorithm.score_metric, algorithm.score_split) if scores is LOAD else scores
    started = time.process_time()
    wall_started = time.perf_counter()
    objectives, constraints = scoring_problem(benchmark.name, objectives, constraints)
    check_objectives_fit(algorithm, name, objectives)
    check_stop_at_best(stop_at_best, objectives, constraints)
    env = run_algorithm(benchmark.search, algorithm, seed, budget_s, feats, scores, workers, max_jobs,
                        objectives, constraints, stop_at_best)
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
    if env.stopped_at_best_s is not None:
        record["stopped_at_best_s"] = env.stopped_at_best_s
    return record


def check_stop_at_best(stop_at_best: bool, objectives=(), constraints=()) -> None:
    """UserError (one line) for `--stop-at-best` with objectives or constraints: there the regret is
    measured against a front or the feasible table, which the best validation loss does not settle."""
    if stop_at_best and (objectives or constraints):
        from benchmarks.core.errors import UserError

        raise UserError("--stop-at-best is for single-objective runs without constraints: the regret of a "
                        "multi-objective or constrained run can still change after the best validation loss is found")


def check_problem(benchmark, objectives, constraints) -> list[str]:
    """UserError (one line) if no architecture of a loaded `benchmark` satisfies the constraints (texts or
    parsed); else notes (one line each) on a degenerate problem: an objective the constraints leave
    constant over every feasible architecture."""
    from benchmarks.core.objectives import loss_objective
    from benchmarks.core.pareto import constant_objectives, forget_spaces, objective_space
    from benchmarks.core.registry import load_test_losses

    objectives, constraints = scoring_problem(benchmark.name, objectives, constraints)
    try:
        space = objective_space(load_test_losses(benchmark), objectives or (loss_objective(benchmark.name),),
                                constraints)
        constant = constant_objectives(space)
    finally:
        forget_spaces()         # `nasbench.run` runs the algorithm in this process next: no true front in reach
    within = f" within {', '.join(map(str, constraints))}" if constraints else ""
    return [f"every architecture{within} has {name} = {value:.6g}: the problem is degenerate in {name} (the true "
            f"front is flat in it, and hypervolume regret measures the other objectives alone); loosen the "
            f"constraint or leave {name} out of --objectives" for name, value in constant.items()]


def check_objectives_fit(algorithm, name: str, objectives) -> None:
    """UserError (one line) if a multi-objective algorithm is asked to search one objective."""
    from benchmarks.core.errors import UserError

    if getattr(algorithm, "multi_objective", False) and not objectives:
        raise UserError(f"'{name}' is a multi-objective algorithm: name two or three objectives with "
                        "--objectives (e.g. logppl,params)")
