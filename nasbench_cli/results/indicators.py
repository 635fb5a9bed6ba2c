"""Multi-objective indicators beside the HV regret every result file records, computed from a trial's
final front and the table (the data must be at hand):

- `hv`: the recorded HV regret: objectives normalised to the *true front's* ideal and nadir, reference
  point 1.1 (informative only once a front point lands near the true front: early fronts are mostly
  outside the box, so every algorithm scores the true HV);
- `hv-range`: HV regret with objectives normalised to the *table's* whole range over the architectures
  the task admits (best value 0, worst 1), reference point at the worst values (1, ..., 1), as
  HW-GPT-Bench and syne-tune normalise: informative from the first architecture;
- `igd+`: IGD+ (Ishibuchi et al. 2015) in the same range-normalised space: the mean over true-front points
  z of the distance from the nearest found point a, counting only where a is worse (sqrt(sum max(a - z,
  0)^2)); 0 when the true front was found; a trial with no front scores the worst, sqrt(k).
All three: lower is better; 0 means the true front. Each is also a curve over the trial's jobs
(`indicator_curve`: the recorded jobs replayed, as the trial scored its HV regret), so `report --at`,
`plot` and the anytime tables work with every indicator.
"""
import math

import numpy as np

INDICATORS = ("hv", "hv-range", "igd+")


def _points(benchmark, space, front) -> np.ndarray:
    rows = benchmark.search.indices_of([arch for arch, _ in front]) if front else np.empty(0, dtype=int)
    points = space.static[rows].copy()
    if len(rows):
        points[:, space.loss_column] = benchmark.test_loss[rows, [epoch - 1 for _, epoch in front]]
    keep = np.isfinite(points).all(axis=1) & space.feasible[rows] & space.loss_feasible(points[:, space.loss_column]) \
        if len(rows) else np.zeros(0, dtype=bool)
    return points[keep]


def table_range(benchmark, space) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) per objective (minimised) over the admitted architectures, each at its best test epoch."""
    test = np.where(np.isfinite(benchmark.test_loss), benchmark.test_loss, np.inf).min(axis=1)
    points = space.static.copy()
    points[:, space.loss_column] = test
    admitted = space.feasible & np.isfinite(points).all(axis=1)
    low, high = points[admitted].min(axis=0), points[admitted].max(axis=0)
    return low, np.where(high > low, high, low + 1.0)


def indicator_measure(benchmark, space, name: str):
    """`name`'s value (`hv-range` or `igd+`) of a set of test-scored points (minimised objectives, one
    row each), as a function: the argument `measure` of `front_trajectory`."""
    from benchmarks.core.pareto import hypervolume

    low, high = table_range(benchmark, space)
    true = (space.front_points - low) / (high - low)
    reference = np.ones(len(space.objectives))
    true_hv = hypervolume(true, reference)

    def hv_range(points: np.ndarray) -> float:
        found = (points - low) / (high - low)
        return max(0.0, float(true_hv - (hypervolume(found, reference) if len(found) else 0.0)))

    def igd_plus(points: np.ndarray) -> float:
        if not len(points):
            return math.sqrt(len(space.objectives))
        gaps = np.maximum((points - low) / (high - low) - true[:, None, :], 0.0)
        return float(np.sqrt((gaps ** 2).sum(axis=2)).min(axis=1).mean())

    return {"hv-range": hv_range, "igd+": igd_plus}[name]


def _space(record: dict, benchmark):
    from benchmarks.core.pareto import objective_space
    from benchmarks.core.problem import scoring_problem

    objectives, constraints = scoring_problem(record["benchmark"], record["objectives"], record.get("constraints") or ())
    return objective_space(benchmark, objectives, constraints)


def final_indicators(record: dict, benchmark) -> dict:
    """{"hv", "hv-range", "igd+"} of one multi-objective trial's final front (see the module docstring)."""
    space = _space(record, benchmark)
    found = _points(benchmark, space, [tuple(p) for p in record.get("front") or []])
    final = record.get("final_regret")
    return {"hv": math.nan if final is None else float(final),
            **{name: indicator_measure(benchmark, space, name)(found) for name in ("hv-range", "igd+")}}


def indicator_curve(record: dict, benchmark, name: str, measure=None) -> list:
    """Indicator `name` (`hv-range` or `igd+`) after each job of a multi-objective trial: its front
    replayed from the recorded jobs (`trajectory.arch`, `.epochs`) exactly as the trial scored it
    (`benchmarks.core.front_regret`); None before the first front member, as the recorded HV curve.
    `measure`: the indicator's function for the record's problem when already built (`indicator_measure`)."""
    from benchmarks.core.front_regret import front_trajectory

    space = _space(record, benchmark)
    measure = measure or indicator_measure(benchmark, space, name)
    traj = record["trajectory"]
    rows = benchmark.search.indices_of(traj["arch"])
    return front_trajectory(benchmark, space, rows, traj["epochs"], measure)["regret"]


def with_indicator(results, name: str):
    """`results` with each multi-objective record's `final_regret` and regret curve
    (`trajectory.regret`) replaced by indicator `name` (a copy; single-objective records unchanged), and
    `indicator` set on each; `hv` returns `results` itself."""
    import copy

    from benchmarks.core.errors import UserError
    from benchmarks.core.registry import load_benchmark

    if name not in INDICATORS:
        raise UserError(f"unknown indicator '{name}'; one of {', '.join(INDICATORS)}")
    if name == "hv":
        return results
    out = copy.copy(results)
    out.runs = {}
    for benchmark_name, per_label in results.runs.items():
        benchmark = load_benchmark(benchmark_name)
        out.runs[benchmark_name] = {}
        measures = {}                      # one indicator function per problem: the table's range once
        for label, records in per_label.items():
            changed = []
            for record in records:
                if record.get("objectives"):
                    space = _space(record, benchmark)
                    problem = (tuple(record["objectives"]), tuple(record.get("constraints") or ()))
                    if problem not in measures:
                        measures[problem] = indicator_measure(benchmark, space, name)
                    measure = measures[problem]
                    final = measure(_points(benchmark, space, [tuple(p) for p in record.get("front") or []]))
                    trajectory = {**record["trajectory"], "regret": indicator_curve(record, benchmark, name, measure)}
                    record = {**record, "final_regret": final, "trajectory": trajectory, "indicator": name}
                changed.append(record)
            out.runs[benchmark_name][label] = changed
    return out
