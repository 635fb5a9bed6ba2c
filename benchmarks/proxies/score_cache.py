"""The cached table of training-free scores: resumable, interrupt-safe, readable without torch.

Layout under `cache_dir()/proxies/<benchmark>/<config>/` (config = seed, minibatch size, sequence
length, corpus split of the minibatch and the metric code version): `table.npz` (compacted) plus `chunks/*.npz`, each written
atomically by a scoring run every few cells. A run killed at any moment loses at most the cells of
its unwritten chunk; the reader merges the table and the chunks (later files win). An unreadable file
is skipped with a warning (its cells count as unscored) and set aside as `*.corrupt` by the next run.

Each file holds `ids` int64 [m], `metrics` str [k], `values` float64 [m, k] (NaN = metric undefined
for that cell), `scored` bool [m, k], `time_s` and `cpu_s` float64 [m, k] (wall and CPU seconds of
the pass that scored the cell; a pass computes all its metrics together) and `solo` bool [m, k] (that
pass computed this metric alone, so its time is this metric's own cost).
"""
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.atomic import save_npz_atomic
from benchmarks.core.errors import UserError
from benchmarks.core.paths import cache_dir

SCORE_VERSION = "v1"    # bump when a metric's definition or the network changes

# Default charge for one score when the cache holds no timing: CPU seconds of one thread for all
# metrics of a cell in one pass (minibatch 32 x 20): the median over 998 random PTB cells scored by
# `nasbench proxies build --metric all --sample 1000` on the 2-core development machine was 1.82.
DEFAULT_SECONDS_PER_SCORE = 1.8


def config_name(seed: int, batch_size: int, seq_len: int, split: str = "train") -> str:
    """The cache folder of one scoring configuration. Test-split tables keep the name they had before
    the split was part of the configuration (it was always the test split), so old caches stay valid."""
    split_part = "" if split == "test" else f"-{split}"
    return f"seed{seed}-b{batch_size}-t{seq_len}{split_part}-{SCORE_VERSION}"


@dataclass
class ScoreTable:
    """Merged scores: for each scored id, metric values, whether scored, pass seconds and pass metrics."""
    ids: np.ndarray          # int64 [m]
    metrics: tuple           # k metric names (columns)
    values: np.ndarray       # float64 [m, k]
    scored: np.ndarray       # bool [m, k]
    time_s: np.ndarray       # float64 [m, k]: wall seconds of the pass that scored (row, metric)
    cpu_s: np.ndarray        # float64 [m, k]: CPU seconds of that pass (one thread)
    solo: np.ndarray         # bool [m, k]: that pass computed this metric alone

    def column(self, metric: str, ids) -> np.ndarray:
        """float64 [len(ids)]: the metric for `ids`, NaN where unscored."""
        out = np.full(len(ids), np.nan)
        if metric not in self.metrics:
            return out
        j = self.metrics.index(metric)
        row_of = {int(r): i for i, r in enumerate(self.ids)}
        for pos, rid in enumerate(np.asarray(ids)):
            i = row_of.get(int(rid))
            if i is not None and self.scored[i, j]:
                out[pos] = self.values[i, j]
        return out

    def scored_mask(self, metric: str, ids) -> np.ndarray:
        out = np.zeros(len(ids), dtype=bool)
        if metric not in self.metrics:
            return out
        j = self.metrics.index(metric)
        done = {int(r) for r, s in zip(self.ids, self.scored[:, j]) if s}
        return np.array([int(r) in done for r in np.asarray(ids)], dtype=bool)

    def count(self, metric: str) -> int:
        return int(self.scored[:, self.metrics.index(metric)].sum()) if metric in self.metrics else 0


class ScoreCache:
    """The score files of one benchmark and scoring configuration."""

    def __init__(self, benchmark: str, seed: int = 0, batch_size: int | None = None,
                 seq_len: int | None = None, root=None, split: str | None = None):
        from benchmarks.proxies import minibatch as mb

        self.benchmark = benchmark
        self.seed = int(seed)
        self.batch_size = int(batch_size or mb.BATCH_SIZE)
        self.seq_len = int(seq_len or mb.SEQ_LEN)
        self.split = mb.check_split(split or mb.SPLIT)
        base = Path(root) if root is not None else cache_dir() / "proxies"
        self.path = base / benchmark / config_name(self.seed, self.batch_size, self.seq_len, self.split)
        self._counter = 0

    @property
    def table_path(self) -> Path:
        return self.path / "table.npz"

    @property
    def chunk_dir(self) -> Path:
        return self.path / "chunks"

    def files(self) -> list:
        """The table (if any) then the chunks, oldest first."""
        chunks = sorted(self.chunk_dir.glob("chunk-*.npz")) if self.chunk_dir.is_dir() else []
        return ([self.table_path] if self.table_path.is_file() else []) + chunks

    def append(self, rows, metrics) -> Path | None:
        """Write one chunk atomically. rows: (recepie_id, {metric: value}, wall seconds[, CPU seconds])."""
        rows = list(rows)
        if not rows:
            return None
        metrics = tuple(metrics)
        values = np.array([[float(row[1].get(m, np.nan)) for m in metrics] for row in rows],
                          dtype=np.float64).reshape(len(rows), len(metrics))
        scored = np.array([[m in row[1] for m in metrics] for row in rows],
                          dtype=bool).reshape(len(rows), len(metrics))
        seconds = np.array([float(row[2]) for row in rows], dtype=np.float64)
        cpu = np.array([float(row[3]) if len(row) > 3 else np.nan for row in rows], dtype=np.float64)
        self._counter += 1
        name = f"chunk-{time.time_ns():020d}-{os.getpid()}-{self._counter:06d}.npz"
        return save_npz_atomic(self.chunk_dir / name,
                               ids=np.array([int(row[0]) for row in rows], dtype=np.int64),
                               metrics=np.array(metrics, dtype=str), values=values, scored=scored,
                               time_s=np.repeat(seconds[:, None], len(metrics), axis=1),
                               cpu_s=np.repeat(cpu[:, None], len(metrics), axis=1),
                               solo=np.full(values.shape, len(metrics) == 1))

    def load(self, set_aside_corrupt: bool = False) -> ScoreTable:
        """Merge the table and all chunks; unreadable files are skipped with a warning."""
        merged: dict = {}
        for path in self.files():
            try:
                part = _read(path)
            except Exception as exc:  # noqa: BLE001 - any damage makes the file unusable
                target = path.with_name(path.name + ".corrupt")
                action = f"moved to {target.name}" if set_aside_corrupt else "skipped"
                warnings.warn(f"score cache file {path} is unreadable ({exc.__class__.__name__}: {exc}); "
                              f"{action}, its cells count as unscored", RuntimeWarning, stacklevel=2)
                if set_aside_corrupt:
                    os.replace(path, target)
                continue
            for i, j in zip(*np.nonzero(part["scored"])):
                merged[(int(part["ids"][i]), str(part["metrics"][j]))] = (
                    part["values"][i, j], part["time_s"][i, j], part["cpu_s"][i, j], bool(part["solo"][i, j]))
        ids = np.array(sorted({rid for rid, _ in merged}), dtype=np.int64)
        metrics = tuple(sorted({m for _, m in merged}, key=_metric_order))
        values = np.full((len(ids), len(metrics)), np.nan)
        scored = np.zeros(values.shape, dtype=bool)
        time_s = np.full(values.shape, np.nan)
        cpu_s = np.full(values.shape, np.nan)
        solo = np.zeros(values.shape, dtype=bool)
        row_of = {int(r): i for i, r in enumerate(ids)}
        col_of = {m: j for j, m in enumerate(metrics)}
        for (rid, metric), (value, seconds, cpu, alone) in merged.items():
            i, j = row_of[rid], col_of[metric]
            values[i, j], scored[i, j], time_s[i, j], cpu_s[i, j], solo[i, j] = value, True, seconds, cpu, alone
        return ScoreTable(ids=ids, metrics=metrics, values=values, scored=scored, time_s=time_s, cpu_s=cpu_s,
                          solo=solo)

    def compact(self) -> ScoreTable:
        """Merge everything into `table.npz` (atomically) and delete the merged chunks."""
        chunks = [p for p in self.files() if p != self.table_path]
        table = self.load(set_aside_corrupt=True)
        if not chunks:
            return table
        self._write_table(table)
        for path in chunks:
            if path.exists():
                path.unlink()
        return table

    def _write_table(self, table: ScoreTable) -> None:
        save_npz_atomic(self.table_path, ids=table.ids, metrics=np.array(table.metrics, dtype=str),
                        values=table.values, scored=table.scored, time_s=table.time_s, cpu_s=table.cpu_s,
                        solo=table.solo)


def _metric_order(metric: str):
    from benchmarks.proxies.metrics import METRICS

    return (METRICS.index(metric) if metric in METRICS else len(METRICS), metric)


def _read(path: Path) -> dict:
    """A chunk or the table as a dict of arrays; ValueError when keys or shapes are inconsistent."""
    with np.load(path, allow_pickle=False) as data:
        part = {k: data[k] for k in data.files}
    for key in ("ids", "metrics", "values", "scored", "time_s", "cpu_s", "solo"):
        if key not in part:
            raise ValueError(f"missing array '{key}'")
    shape = (len(part["ids"]), len(part["metrics"]))
    if any(part[key].shape != shape for key in ("values", "scored", "time_s", "cpu_s", "solo")):
        raise ValueError("arrays of inconsistent shapes")
    return part


def load_scores(benchmark, metric: str, seed: int = 0, batch_size=None, seq_len=None,
                split: str | None = None) -> np.ndarray:
    """float64 [n] of `metric` for the benchmark's rows (its `search.ids` order); NaN for unscored cells,
    -inf for cells that were scored but whose score is not finite (a degenerate untrained network).

    Cells the user's cache lacks are taken from the table shipped with the package for this
    configuration (benchmarks/proxies/shipped.py), matched by id and recipe.

    `benchmark`: a loaded Benchmark or its SearchTable. Read-only; needs no torch.
    """
    from benchmarks.proxies.metrics import METRICS

    if metric not in METRICS:
        raise UserError(f"unknown metric '{metric}'; choose one of: {', '.join(METRICS)}")
    search = getattr(benchmark, "search", benchmark)
    cache = ScoreCache(search.name, seed, batch_size, seq_len, split=split)
    table = cache.load()
    values = table.column(metric, search.ids)
    values[table.scored_mask(metric, search.ids) & ~np.isfinite(values)] = -np.inf
    if np.isnan(values).any():
        from benchmarks.proxies.shipped import shipped_values

        shipped, _ = shipped_values(search, metric, cache.path.name)
        if shipped is not None:
            fill = np.isnan(values)
            values[fill] = shipped[fill]
    return values


def with_shipped(table: ScoreTable, benchmark, cache: "ScoreCache") -> tuple[ScoreTable, list[str]]:
    """`table` (a cache's scores) plus the tables shipped with the package for the cache's configuration,
    for the cells the cache lacks (as `load_scores` reads them); and the metrics taken from the package.
    Cells a shipped table holds count as scored (-inf where the score is not finite)."""
    from benchmarks.proxies.metrics import METRICS
    from benchmarks.proxies.shipped import shipped_values

    search = getattr(benchmark, "search", benchmark)
    fills = {}
    for metric in METRICS:
        values, _ = shipped_values(search, metric, cache.path.name)
        if values is not None:
            fill = ~table.scored_mask(metric, search.ids) & ~np.isnan(values)
            if fill.any():
                fills[metric] = (fill, values)
    if not fills:
        return table, []
    metrics = tuple(table.metrics) + tuple(m for m in fills if m not in table.metrics)
    ids = np.union1d(table.ids, search.ids[np.any([fill for fill, _ in fills.values()], axis=0)]).astype(np.int64)
    position = {int(i): k for k, i in enumerate(ids)}
    shape = (len(ids), len(metrics))
    merged = ScoreTable(ids, metrics, np.full(shape, np.nan), np.zeros(shape, dtype=bool), np.full(shape, np.nan),
                        np.full(shape, np.nan), np.zeros(shape, dtype=bool))
    here = [position[int(i)] for i in table.ids]
    for j in range(len(table.metrics)):     # the merged table's first columns are the table's own
        for array in ("values", "scored", "time_s", "cpu_s", "solo"):
            getattr(merged, array)[here, j] = getattr(table, array)[:, j]
    for metric, (fill, values) in fills.items():
        j = metrics.index(metric)
        rows = [position[int(i)] for i in search.ids[fill]]
        merged.values[rows, j] = values[fill]
        merged.scored[rows, j] = True
    return merged, list(fills)


def seconds_per_score(benchmark, metric: str = "all", seed: int = 0, batch_size=None,
                      seq_len=None, split: str | None = None) -> float:
    """Median CPU seconds (one thread) to score one cell, as measured by the scoring runs in the cache.

    CPU rather than wall time, so that a loaded machine does not inflate it. metric 'all': passes
    that computed every metric; else passes that computed `metric` alone if any, otherwise any pass
    that computed it. DEFAULT_SECONDS_PER_SCORE when nothing was measured.
    """
    name = getattr(getattr(benchmark, "search", benchmark), "name", benchmark)
    table = ScoreCache(name, seed, batch_size, seq_len, split=split).load()
    if not len(table.ids):
        return DEFAULT_SECONDS_PER_SCORE
    if metric == "all":
        from benchmarks.proxies.metrics import METRICS

        if not all(m in table.metrics for m in METRICS):
            return DEFAULT_SECONDS_PER_SCORE
        j = table.metrics.index(METRICS[0])
        mask = table.scored[:, j] & ~table.solo[:, j]
    elif metric in table.metrics:
        j = table.metrics.index(metric)
        mask = table.scored[:, j] & table.solo[:, j]
        if not mask.any():
            mask = table.scored[:, j]
    else:
        return DEFAULT_SECONDS_PER_SCORE
    times = table.cpu_s[mask, j]
    times = times[np.isfinite(times) & (times >= 0)]
    return float(np.median(times)) if len(times) else DEFAULT_SECONDS_PER_SCORE
