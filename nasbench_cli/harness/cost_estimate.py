"""How much CPU time a run will take, said before it starts.

A trial's cost is the CPU time of the algorithm and the simulator in its process (`compute_s` in its
result file, seconds); the simulated training time costs nothing. The estimate for a trial still to
run comes, in this order, from
1. the trials of the same label already in the results folder (measured on this machine, same settings);
2. a table of one trial of each algorithm at each benchmark's default budget, measured by
   `scripts/measure_trial_cost.py` on the machine it names: `trial_cost.json` beside this module, or the
   file `NASBENCH_TRIAL_COST` names (a table measured on your own machine).
The table's figures are scaled to the run's budget along a power law through the two nearest budgets where
the table has the algorithm at several budgets and the same workers (DPL on ptb refits on all its results
every fifth one: a 1000-hour trial costs far more than ten 100-hour ones), else with the power its other
worker counts show, else linearly; and to its simulated workers along a power law: through the two nearest
measurements where the table has several worker counts for the algorithm on the benchmark, else with the
median power the algorithm shows on the other benchmarks where it has, else linearly (the freeze-thaw
searchers cost far more than linearly). A model-based searcher's cost grows faster than linearly with its
evaluations: the estimate is a rough guide, not a promise. The cost-aware
`nmt-*-updates` read `nmt-*`'s entries, their budget counted in median systems (`measured_as`).
"""
import json
import math
from dataclasses import dataclass
from pathlib import Path

MEASURED = Path(__file__).with_name("trial_cost.json")
TABLE_VARIABLE = "NASBENCH_TRIAL_COST"
MEASURED_ON = "measured on "    # a TrialCost's source when the table gave it
SAY_FROM_S = 60.0      # `run` prints the estimate when the trials to run cost at least this many CPU seconds


@dataclass(frozen=True)
class TrialCost:
    """Estimated CPU seconds per trial of one label, and where the figure comes from."""
    label: str
    seconds: float
    source: str          # "this folder (N trials)" or "measured on <machine>"


def measured_table(path: Path | None = None) -> dict:
    """{"machine": ..., "costs": {benchmark: {algo: {"compute_s", "budget", "workers"} or a list of them at
    different budgets or workers}}}, a measurement's own "machine" where it was taken on another CPU than the
    table's; empty if absent."""
    import os

    path = path or Path(os.environ.get(TABLE_VARIABLE) or MEASURED)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def measured_as(benchmark: str, budget: float) -> tuple[str, float]:
    """(benchmark, budget) whose measurement stands for `benchmark` at `budget`: itself, except the
    cost-aware `nmt-<pair>-updates`, which run the systems of `nmt-<pair>` at the same CPU cost per
    evaluation; their budget in updates is read as that many median systems' evaluations."""
    from benchmarks.core.catalog import BENCHMARKS, NMT_COST_SUFFIX, NMT_MEDIAN_UPDATES
    from benchmarks.nmt.table import pair_of

    spec = BENCHMARKS.get(benchmark)
    if spec is None or spec.clock != "updates":
        return benchmark, budget
    return benchmark.removesuffix(NMT_COST_SUFFIX), budget / NMT_MEDIAN_UPDATES[pair_of(benchmark)]


def measurements(entry) -> list[dict]:
    """A table entry's measurements: one {"compute_s", "budget", "workers"}, or a list of them taken at
    different numbers of simulated workers."""
    return entry if isinstance(entry, list) else [entry] if entry is not None else []


def workers_of(measurement: dict) -> int:
    """The simulated workers a measurement was taken at (1 where the table does not say)."""
    return int(measurement.get("workers") or 1)


def at_one_worker(entry) -> dict | None:
    """The entry's measurement at one simulated worker (the docs' cost table shows it), if any; of several
    at different budgets, the largest (measurements are at most the benchmark's default budget)."""
    ones = [m for m in measurements(entry) if workers_of(m) == 1]
    return max(ones, key=lambda m: float(m.get("budget") or 0.0)) if ones else None


def _exponent(c1: float, w1: float, c2: float, w2: float) -> float:
    """The power of the workers (or the budget) through two measurements, kept within [0, 3] (a noisy pair:
    nothing absurd)."""
    return min(3.0, max(0.0, math.log(c2 / c1) / math.log(w2 / w1)))


def _power_through_extremes(points) -> float | None:
    """The power through the lowest and highest x of (x, cost) points; None with one x or a zero cost."""
    (x1, c1), (x2, c2) = min(points), max(points)
    return _exponent(c1, x1, c2, x2) if x2 > x1 and c1 > 0 and c2 > 0 else None


def worker_exponent(entry) -> float | None:
    """How the cost of one trial grows with the simulated workers in one table entry, as the power through
    its lowest and highest worker counts; None for a single worker count (or a malformed entry)."""
    try:
        return _power_through_extremes([(float(workers_of(m)), float(m["compute_s"]) / float(m["budget"]))
                                        for m in measurements(entry)])
    except (TypeError, ValueError, KeyError, ZeroDivisionError, AttributeError, IndexError):
        return None


def _through_nearest(points: list[tuple[float, float]], x: float, power: float) -> float:
    """Cost at `x` from (x_i, cost_i) points along the power law through the two nearest to `x` (in ratio);
    from a single point (or two at the same x, or a cost of zero), along `power`."""
    points = sorted(points, key=lambda p: (abs(math.log(x / p[0])), p[0]))
    (x1, c1), rest = points[0], points[1:]
    if not rest or rest[0][0] == x1 or c1 <= 0 or rest[0][1] <= 0:
        return c1 * (x / x1) ** power
    x2, c2 = rest[0]
    return c1 * (x / x1) ** _exponent(c1, x1, c2, x2)


def per_trial_seconds(entry, budget: float, workers: int, exponent: float = 1.0) -> float:
    """CPU seconds of one trial at `budget` and `workers` from a table entry. In the budget: along the power
    law through the two measurements nearest `budget` at the same workers where there are several (a
    model refit on every result so far costs more than linearly), else with the median power of the
    entry's other worker counts, else linearly. In the workers: along the power law through the two
    measurements nearest `workers` (in ratio) where there are several: a freeze-thaw searcher refits its
    model on every result, and four workers give it four times the results in the same budget (DPL on wt2:
    85 CPU s at one worker, 1067 at four); from a single worker count, as its power `exponent` (linear
    unless said). Raises TypeError, ValueError, KeyError or ZeroDivisionError on a malformed entry."""
    import statistics

    by_workers: dict[float, list[tuple[float, float]]] = {}
    for m in measurements(entry):
        by_workers.setdefault(float(workers_of(m)), []).append((float(m["budget"]), float(m["compute_s"])))
    if not by_workers:
        raise KeyError("compute_s")
    if any(b <= 0 for points in by_workers.values() for b, _ in points):
        raise ZeroDivisionError("budget")
    borrowed = [e for points in by_workers.values() for e in [_power_through_extremes(points)] if e is not None]
    budget_power = statistics.median(borrowed) if borrowed else 1.0
    at_budget = [(w, _through_nearest(points, budget, budget_power)) for w, points in by_workers.items()]
    return _through_nearest(at_budget, float(workers), exponent)


def borrowed_exponent(table: dict, algo: str) -> float | None:
    """The median power of the workers over the benchmarks where the table measured `algo` at several
    worker counts, for a benchmark where it has one (a table of your own measured at four workers on some
    benchmarks only): closer than linear for a freeze-thaw searcher."""
    import statistics

    exponents = [e for costs in table.get("costs", {}).values() if isinstance(costs, dict)
                 for e in [worker_exponent(costs.get(algo))] if e is not None]
    return statistics.median(exponents) if exponents else None


def machine_of(measurement: dict, table: dict) -> str:
    """The CPU a measurement was taken on: its own `machine` where it names one (an entry added later on
    another machine), else the table's."""
    return str(measurement.get("machine") or table.get("machine") or "a CPU")


def nearest(entry, budget: float, workers: int) -> dict:
    """The entry's measurement nearest (budget, workers), in ratio: the one an estimate leans on most."""
    return min(measurements(entry), key=lambda m: (abs(math.log(float(m["budget"]) / budget))
                                                   + abs(math.log(workers_of(m) / workers))))


def _shipped(run, algo: str, table: dict) -> TrialCost | None:
    from optimizers.registry import algorithm_name

    benchmark, budget = measured_as(run.benchmark, run.budget)
    costs = table.get("costs", {}).get(benchmark, {})
    name = algo if algo in costs else algorithm_name(algo)
    entry = costs.get(name)
    try:
        borrowed = borrowed_exponent(table, name)          # 0.0 is a power too: not `or 1.0`
        seconds = per_trial_seconds(entry, budget, run.workers, 1.0 if borrowed is None else borrowed)
        machine = machine_of(nearest(entry, budget, run.workers), table)
    except (TypeError, ValueError, KeyError, ZeroDivisionError, AttributeError):
        return None                  # no entry, or a malformed one (a hand-made table): no estimate from it
    if not math.isfinite(seconds):
        return None
    return TrialCost(run.label_of(algo), seconds, MEASURED_ON + machine)


def _from_folder(run, algo: str, done: list[Path]) -> TrialCost | None:
    label = run.label_of(algo)
    seconds = []
    for path in done:
        if path.parent.name != label:
            continue
        try:
            seconds.append(float(json.loads(path.read_text())["compute_s"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    if not seconds:
        return None
    return TrialCost(label, sum(seconds) / len(seconds), f"this folder ({len(seconds)} trial{'s' * (len(seconds) != 1)})")


def estimate(run, todo, done: list[Path], table: dict | None = None) -> tuple[float, list[TrialCost]]:
    """(estimated CPU seconds of the trials `todo`, per-label costs) for the run `run` (a RunDescription);
    labels with no measurement are left out of both, so the total is a lower bound when some are missing."""
    table = measured_table() if table is None else table
    per_label = {}
    for algo in run.algos:
        cost = _from_folder(run, algo, done) or _shipped(run, algo, table)
        if cost is not None:
            per_label[cost.label] = cost
    total = sum(per_label[spec.label].seconds for spec in todo if spec.label in per_label)
    return total, [per_label[label] for label in dict.fromkeys(spec.label for spec in todo) if label in per_label]


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "<1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_line(total_s: float, costs: list[TrialCost], trials: int, jobs: int) -> str:
    """One line: total CPU time, wall time on `jobs` processes, the costliest labels per trial."""
    wall = total_s / max(1, jobs)
    worst = sorted(costs, key=lambda c: -c.seconds)[:3]
    each = ", ".join(f"{c.label} ~{_duration(c.seconds)}" for c in worst)
    sources = sorted({c.source for c in worst if not c.source.startswith(MEASURED_ON)})
    machines = sorted({c.source.removeprefix(MEASURED_ON) for c in worst if c.source.startswith(MEASURED_ON)})
    if machines:
        sources.append(MEASURED_ON + " and ".join(machines))
    return (f"estimate: about {_duration(total_s)} of CPU for {trials} trial{'s' * (trials != 1)}, "
            f"~{_duration(wall)} on {jobs} process{'es' * (jobs != 1)} (per trial: {each}; "
            f"{'; '.join(sources)}; scaled to this budget)")


def worth_saying(total_s: float) -> bool:
    return math.isfinite(total_s) and total_s >= SAY_FROM_S
