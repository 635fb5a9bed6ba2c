"""Scoring a trial: its regret trajectory from the benchmark's test losses (or, for a multi-objective or
constrained run, hypervolume regret against the true front / regret against the best feasible
architecture), L*, the best architecture, and the job log. Runs after the algorithm has finished,
in the process that writes the record; `files` recomputes the same fields to verify a record."""
import numpy as np

from benchmarks.core.problem import scoring_problem
from nasbench_cli.results.record import SCORED_ORDER


def job_log(history) -> dict:
    """Per finished job, parallel to the trajectory: when a worker took it (simulated seconds), which
    worker, the checkpoint it continued from, and its non-training overhead (seconds)."""
    return {"start_s": list(history.start_s), "worker": list(history.worker),
            "from_epoch": list(history.from_epoch), "overhead_s": list(history.overhead_s)}


def score_record(unscored: dict, benchmark) -> dict:
    """The result record of an `unscored_record`: its regret trajectory, L* and the benchmark's best
    architecture from `benchmark`'s test losses (read now if it was loaded without them, then dropped)."""
    from benchmarks.core.registry import load_test_losses
    from benchmarks.core.regret import final_regret, trajectory

    from benchmarks.core.pareto import forget_spaces

    scoring = load_test_losses(benchmark)
    history = unscored["history"]
    traj = trajectory(scoring, history)
    fields = dict(unscored, l_star=scoring.l_star, benchmark_best_arch=scoring.best_id)
    if unscored.get("objectives") or unscored.get("constraints"):
        try:
            fields.update(front_fields(scoring, unscored, traj))
        finally:
            forget_spaces()     # the true front must not outlive the scoring: the next trial's algorithm may run here
    fields.update(n_evaluations=len(traj["time_s"]), final_regret=final_regret(traj), trajectory=traj,
                  jobs=job_log(history))
    used_up = table_used_up_s(history, scoring.search.n)
    if used_up is not None:
        fields["table_used_up_s"] = used_up
    return {key: fields[key] for key in SCORED_ORDER if key in fields}


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
