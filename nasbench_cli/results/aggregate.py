"""Aggregate trial trajectories on a common simulated-time grid (never by step index).

A trial's regret is a step function of simulated time: the regret after a train call holds until the
next call changes it. Before the trial's first incumbent (its first evaluation with a finite validation
loss) the trial is *absent* (NaN), not zero; after its own budget it is absent too. Means and 95%
t-intervals at a grid time are taken over the trials present there. Times are seconds unless the
name says hours (`_h`).
"""
import math

import numpy as np

SECONDS_PER_HOUR = 3600.0


def _clock_spec(benchmark: str):
    """The catalog entry whose clock `benchmark`'s results use (ptb's, in hours, for a name the catalog
    does not know)."""
    from benchmarks.core.catalog import BENCHMARKS

    return BENCHMARKS.get(benchmark, BENCHMARKS["ptb"])


def clock_unit_s(benchmark: str) -> float:
    """Clock seconds per displayed unit of `benchmark`: 3600 (hours) or 1 (evaluations, gpt-*)."""
    return _clock_spec(benchmark).clock_unit_s


def clock_label(benchmark: str) -> str:
    """'simulated hours' or 'evaluations'."""
    return _clock_spec(benchmark).clock_label


def clock_short(benchmark: str) -> str:
    """'h' or 'evals'."""
    return _clock_spec(benchmark).clock_short


HV_REACH_THRESHOLDS = (0.1, 0.05)   # normalised hypervolume regret (multi-objective runs)


def reach_thresholds(record: dict) -> tuple:
    """The regrets whose first reaching the report times, in the record's regret unit: the benchmark's
    (log-perplexity 0.1 and 0.05 on ptb/wt2, GLUE points 1 and 0.5 on bert, perplexity 0.2 and 0.1
    on gpt-*), or HV_REACH_THRESHOLDS for a multi-objective run."""
    if record.get("objectives"):
        return HV_REACH_THRESHOLDS
    return tuple(_clock_spec(record["benchmark"]).reach_thresholds)


def regret_unit(record: dict) -> str:
    """What the record's regret is measured in: its benchmark's objective (log-perplexity, GLUE points,
    perplexity), or normalised hypervolume for a multi-objective run."""
    return "normalised hypervolume" if record.get("objectives") else _clock_spec(record["benchmark"]).objective


def regret_points(record: dict) -> tuple[np.ndarray, np.ndarray]:
    """(time_s, regret) of the train calls that had an incumbent (regret not null)."""
    traj = record["trajectory"]
    pairs = [(t, r) for t, r in zip(traj["time_s"], traj["regret"]) if r is not None]
    if not pairs:
        return np.empty(0), np.empty(0)
    times, regrets = zip(*pairs)
    return np.asarray(times, dtype=float), np.asarray(regrets, dtype=float)


def first_time_s(record: dict) -> float | None:
    """Simulated seconds at the trial's first incumbent, None if it never had one."""
    times, _ = regret_points(record)
    return float(times[0]) if len(times) else None


def step_regret(times_s, regrets, grid_s, end_s: float = math.inf) -> np.ndarray:
    """Regret at each grid time: the value of the last point at or before it; NaN before the first
    point and after `end_s` (the trial's budget)."""
    times_s = np.asarray(times_s, dtype=float)
    regrets = np.asarray(regrets, dtype=float)
    grid_s = np.asarray(grid_s, dtype=float)
    out = np.full(grid_s.shape, np.nan)
    if len(times_s) == 0:
        return out
    idx = np.searchsorted(times_s, grid_s, side="right") - 1
    present = (idx >= 0) & (grid_s <= end_s)
    out[present] = regrets[idx[present]]
    return out


def time_grid_s(records, n_points: int = 300) -> np.ndarray:
    """Log-spaced grid (seconds) from the earliest first incumbent over `records` to the largest
    budget; both ends included exactly."""
    end = max(float(r["budget_s"]) for r in records)
    starts = [t for t in (first_time_s(r) for r in records) if t is not None and t > 0]
    start = min(starts) if starts else end / 1000.0
    start = min(start, end)
    if start >= end:
        return np.array([end])
    grid = np.geomspace(start, end, n_points)
    grid[0], grid[-1] = start, end
    return grid


def regret_matrix(records, grid_s) -> np.ndarray:
    """[n_trials, n_grid] regret of each trial on the grid, NaN where the trial is absent."""
    rows = [step_regret(*regret_points(r), grid_s, end_s=float(r["budget_s"])) for r in records]
    return np.vstack(rows) if rows else np.empty((0, len(grid_s)))


def t_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of the finite values with a Student-t interval; bounds NaN if n < 2,
    all NaN if n == 0."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if n < 2:
        return mean, math.nan, math.nan
    from scipy.special import stdtrit    # Student t quantile: what stats.t.ppf computes (imported only when needed:
    #                                      0.2 s at the end of every one-trial run otherwise)
    half = float(stdtrit(n - 1, 0.5 + confidence / 2) * values.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


BAND_KINDS = {"ci95": "shaded 95% t-interval", "sem": "shaded ±1 standard error"}


def mean_band(matrix, confidence: float = 0.95, kind: str = "ci95") -> dict:
    """Per grid column over the trials present: mean, low, high (NaN where < 2 present), n. `kind`:
    'ci95' (Student-t interval at `confidence`) or 'sem' (mean ± one standard error)."""
    from scipy.special import stdtrit

    matrix = np.asarray(matrix, dtype=float)
    present = np.isfinite(matrix)
    n = present.sum(axis=0)
    filled = np.where(present, matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, filled.sum(axis=0) / np.maximum(n, 1), np.nan)
        dev = np.where(present, matrix - mean, 0.0)
        sd = np.sqrt((dev ** 2).sum(axis=0) / np.maximum(n - 1, 1))
        factor = 1.0 if kind == "sem" else stdtrit(np.maximum(n - 1, 1), 0.5 + confidence / 2)
        half = factor * sd / np.sqrt(np.maximum(n, 1))
    half = np.where(n >= 2, half, np.nan)
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": n}


def mean_rank(per_algo: dict, grid_s) -> dict:
    """Mean rank over time among algorithms (1 = lowest regret; ties share the average rank).

    `per_algo`: algo -> list of trial records. At each grid time, trials with the same trial index
    `k` are ranked against each other among the algorithms present there (at least two; an
    algorithm without an incumbent yet is absent, not last); an algorithm's mean rank is the
    average over the trial indices ranked. Returns algo -> {"mean": [n_grid] (NaN where never
    ranked), "n": [n_grid] number of its trials ranked there}.
    """
    from scipy import stats

    grid_s = np.asarray(grid_s, dtype=float)
    algos = list(per_algo)
    by_trial = {a: {r["trial"]: r for r in per_algo[a]} for a in algos}
    total = {a: np.zeros(len(grid_s)) for a in algos}
    count = {a: np.zeros(len(grid_s), dtype=int) for a in algos}
    for k in sorted({k for a in algos for k in by_trial[a]}):
        members = [a for a in algos if k in by_trial[a]]
        if len(members) < 2:
            continue
        values = regret_matrix([by_trial[a][k] for a in members], grid_s)   # [A_k, G]
        ranks = stats.rankdata(values, axis=0, nan_policy="omit")
        enough = np.isfinite(values).sum(axis=0) >= 2
        for row, a in enumerate(members):
            ok = enough & np.isfinite(values[row])
            total[a][ok] += ranks[row][ok]
            count[a][ok] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return {a: {"mean": np.where(count[a] > 0, total[a] / np.maximum(count[a], 1), np.nan), "n": count[a]}
                for a in algos}


def final_regrets(records) -> np.ndarray:
    """Final regret per trial; a trial that never found an incumbent counts as +inf (worst)."""
    return np.array([math.inf if r["final_regret"] is None else float(r["final_regret"]) for r in records])


def ecdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted finite values x and the share of *all* values <= x (infinite ones never
    count, so the curve ends below 1 if some trials found nothing)."""
    values = np.asarray(values, dtype=float)
    x = np.sort(values[np.isfinite(values)])
    y = np.arange(1, len(x) + 1) / max(len(values), 1)
    return x, y


def time_to_reach_s(record: dict, threshold: float) -> float | None:
    """Simulated seconds until the trial's regret first was <= threshold, None if it never was."""
    times, regrets = regret_points(record)
    hit = np.nonzero(regrets <= threshold)[0]
    return float(times[hit[0]]) if len(hit) else None


def busy_seconds(record: dict, times_s) -> np.ndarray:
    """Worker-seconds spent on jobs from 0 up to each time in `times_s` (all workers together)."""
    times_s = np.asarray(times_s, dtype=float)

    def elapsed_since(points):   # sum over points p <= t of (t - p), for every t
        points = np.sort(np.asarray(points, dtype=float))
        before = np.searchsorted(points, times_s, side="right")
        cumulative = np.concatenate([[0.0], np.cumsum(points)])
        return before * times_s - cumulative[before]

    return elapsed_since(record["jobs"]["start_s"]) - elapsed_since(record["trajectory"]["time_s"])


def busy_share_binned(record: dict, edges_s) -> np.ndarray:
    """Mean share of the trial's workers busy within each bin [edges[i], edges[i+1]) (seconds)."""
    edges_s = np.asarray(edges_s, dtype=float)
    workers = int(record.get("workers") or 1)
    return np.diff(busy_seconds(record, edges_s)) / (workers * np.diff(edges_s))
