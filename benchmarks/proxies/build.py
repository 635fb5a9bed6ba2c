"""A scoring run: pick cells, score the ones the cache lacks, write chunks as they finish.

Cells are taken in a fixed random order of the benchmark's rows (`SAMPLE_SEED`), so `--sample N`
always means the same N cells and a larger N extends a smaller one. Workers use one thread each.
"""
import time
from dataclasses import dataclass, field

import numpy as np

from benchmarks.core.errors import UserError

SAMPLE_SEED = 0          # fixed order in which cells are sampled
FLUSH_EVERY = 20         # cells per chunk file
FLUSH_SECONDS = 60.0     # or at least this often


def completed_mask(search) -> np.ndarray:
    """Cells whose training completed: status OK and all 50 epochs (the paper's population)."""
    return (search.status == "OK") & (search.n_epochs == search.max_epochs)


def sample_rows(search, sample: int | None, completed_only: bool = False) -> np.ndarray:
    """Row indices: the first `sample` rows of the fixed permutation (all rows if `sample` is None)."""
    order = np.random.default_rng(SAMPLE_SEED).permutation(search.n)
    if completed_only:
        order = order[completed_mask(search)[order]]
    if sample is not None:
        if sample < 1:
            raise UserError(f"--sample must be at least 1, got {sample}")
        order = order[:sample]
    return order


def parse_metrics(text: str) -> tuple:
    """'all' or a comma-separated list of metric names -> tuple in canonical order."""
    from benchmarks.proxies.metrics import METRICS

    if text in ("all", "", None):
        return METRICS
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise UserError(f"unknown metric(s) {', '.join(unknown)}; choose from: all, {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in names)


@dataclass
class BuildReport:
    requested: int = 0
    already: int = 0
    scored: int = 0
    failed: int = 0
    first_error: str = ""
    seconds: list = field(default_factory=list)       # wall seconds per scored cell
    cpu_seconds: list = field(default_factory=list)   # CPU seconds per scored cell
    interrupted: bool = False


_WORKER: dict = {}


def _init_worker(benchmark: str, seed: int, batch_size: int, seq_len: int, split: str) -> None:
    import torch
    from threadpoolctl import threadpool_limits

    from benchmarks.proxies.minibatch import load_corpus

    torch.set_num_threads(1)
    _WORKER["limits"] = threadpool_limits(1)
    _WORKER.update(corpus=load_corpus(benchmark), seed=seed, batch_size=batch_size, seq_len=seq_len,
                   split=split)


def _score_task(task):
    """(recepie_id, recipe JSON, metrics) -> (id, {metric: value} or None, wall s, CPU s, error)."""
    import json

    from benchmarks.proxies.metrics import score_recipe

    rid, recipe, metrics = task
    start, cpu = time.perf_counter(), time.process_time()
    try:
        scores, _ = score_recipe(json.loads(recipe), _WORKER["corpus"], metrics, seed=_WORKER["seed"],
                                 batch_size=_WORKER["batch_size"], seq_len=_WORKER["seq_len"],
                                 split=_WORKER["split"])
        error = ""
    except Exception as exc:  # noqa: BLE001 - one bad cell must not stop a run of thousands
        scores, error = None, f"{exc.__class__.__name__}: {exc}"
    return rid, scores, time.perf_counter() - start, time.process_time() - cpu, error


def run_build(benchmark, cache, metrics, rows, jobs: int = 1, progress=None, shipped_too: bool = True) -> BuildReport:
    """Score `rows` of `benchmark` (a loaded Benchmark) for `metrics` into `cache` (a ScoreCache); cells
    the cache or (`shipped_too`) the package's shipped table already scores are skipped.

    `progress(done, total)` is called after each cell. KeyboardInterrupt: finished cells are written
    first, then the interrupt propagates with `report.interrupted` set (report attached as `.report`).
    """
    search = benchmark.search
    table = cache.load(set_aside_corrupt=True)
    ids = search.ids[rows]
    missing = np.zeros(len(rows), dtype=bool)
    for metric in metrics:
        have = table.scored_mask(metric, ids)
        if not shipped_too:
            missing |= ~have
            continue
        from benchmarks.proxies.shipped import shipped_values

        shipped, _ = shipped_values(search, metric, cache.path.name)   # the package's scores count as done
        missing |= ~have if shipped is None else ~(have | ~np.isnan(shipped[rows]))
    todo = [int(r) for r, m in zip(rows, missing) if m]
    report = BuildReport(requested=len(rows), already=int(len(rows) - len(todo)))
    tasks = [(int(search.ids[r]), search.recipes[r], tuple(metrics)) for r in todo]
    pending, last_flush = [], time.monotonic()

    def flush():
        nonlocal pending, last_flush
        cache.append(pending, metrics)
        pending, last_flush = [], time.monotonic()

    def collect(result):
        rid, scores, seconds, cpu, error = result
        if scores is None:          # not cached: a later run retries it
            report.failed += 1
            report.first_error = report.first_error or f"cell {rid}: {error}"
        else:
            report.scored += 1
            report.seconds.append(seconds)
            report.cpu_seconds.append(cpu)
            pending.append((rid, scores, seconds, cpu))
        if len(pending) >= FLUSH_EVERY or time.monotonic() - last_flush > FLUSH_SECONDS:
            flush()
        if progress is not None:
            progress(report.scored + report.failed, len(tasks))

    pool = None
    try:
        if jobs <= 1 and tasks:       # nothing to score (all cached or shipped): no PyTorch, no corpus
            _init_worker(search.name, cache.seed, cache.batch_size, cache.seq_len, cache.split)
            for task in tasks:
                collect(_score_task(task))
        elif tasks:
            import multiprocessing

            pool = multiprocessing.get_context("fork").Pool(
                jobs, initializer=_init_worker,
                initargs=(search.name, cache.seed, cache.batch_size, cache.seq_len, cache.split))
            for result in pool.imap_unordered(_score_task, tasks, chunksize=1):
                collect(result)
            pool.close()
            pool.join()
            pool = None
    except KeyboardInterrupt as exc:
        report.interrupted = True
        exc.report = report
        raise
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if pending:
            flush()
    return report
