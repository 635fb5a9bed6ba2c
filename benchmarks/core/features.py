"""Architecture feature matrices for optimizers: `features(benchmark, kind)`.

Kinds: the 10-d graph2vec shipped with NAS-Bench-NLP (PTB only) and our own graph2vec
(`benchmarks.cells.graph2vec`) in 10 and 50 dimensions. Ours are built on first use and cached under
`cache_dir()/features/` in an .npz keyed by benchmark, checksum, algorithm version, dimension and
seed; a cache file that is unreadable or does not match the benchmark is rebuilt.
"""
from __future__ import annotations

import time
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.core.table import immutable

FEATURE_KINDS = {
    "shipped-10d": "10-d graph2vec shipped with NAS-Bench-NLP (doc2vec_features_lowdim.csv; ptb only: "
                   "on wt2, which ships none, our g2v-10d over its cells stands in)",
    "g2v-10d": "our 10-d graph2vec: Weisfeiler-Lehman words of the cell, PV-DBOW doc2vec, seed 0",
    "g2v-50d": "our 50-d graph2vec: Weisfeiler-Lehman words of the cell, PV-DBOW doc2vec, seed 0",
    "bert-encoding": "the 38-number 0/1 FlexiBERT encoding (benchmarks.flexibert.space; bert only)",
    "cell-encoding": "the 80-number count encoding of a recurrent cell (benchmarks.cells.space; ptb, wt2)",
    "gpt-encoding": "the per-choice encoding of a GPT-2-style decoder (benchmarks.gpt.space; gpt-s, gpt-m, gpt-l)",
    "nmt-encoding": "the six hyperparameters scaled to [0, 1] as NMTHPO's .hyps_scaled (benchmarks.nmt.space; nmt-*)",
    "lora-encoding": "base model family and size, LoRA rank, batch size, learning rate in [0, 1] (benchmarks.lora.space; lora-*)",
}
ENCODING_KINDS = ("bert-encoding", "cell-encoding", "gpt-encoding", "nmt-encoding", "lora-encoding")   # a search space's own encoding (benchmarks.core.space)
G2V_DIMS = {"g2v-10d": 10, "g2v-50d": 50}
DEFAULT_SEED = 0

_MEMO: dict = {}   # cache path -> (file stamp, read-only matrix); ("shipped", id) -> (source, view)


def check_kind(kind: str) -> str:
    """`kind` if known, else UserError listing the known kinds."""
    if kind not in FEATURE_KINDS:
        raise UserError(f"unknown feature kind '{kind}'; choose one of: {', '.join(FEATURE_KINDS)}")
    return kind


def features(benchmark, kind: str) -> np.ndarray:
    """Feature matrix of `kind` for every architecture: float64 [n, d], rows in `benchmark.search.ids` order.

    The array is shared and read-only (copy it before modifying). g2v kinds are built on first
    use (about a minute or two for PTB) and cached.
    """
    kind = used_kind(benchmark.name, check_kind(kind))
    space = getattr(benchmark.search, "space", None)
    if kind in ENCODING_KINDS:
        if space is None or space.encoding_kind != kind:
            mine = f"use {space.encoding_kind}" if space is not None else "it has no search space"
            raise UserError(f"feature kind '{kind}' is another search space's encoding; on '{benchmark.name}' {mine}")
        from benchmarks.core.space import encodings

        return encodings(benchmark.search)
    if not _offers_graph2vec(benchmark):
        raise UserError(f"feature kind '{kind}' is a graph2vec embedding of recurrent cells; on '{benchmark.name}' "
                        f"use {space.encoding_kind if space is not None else 'no features'}")
    if kind == "shipped-10d":
        shipped = benchmark.search.shipped_features
        if shipped is None:
            raise UserError(f"the data folder of '{benchmark.name}' has no features CSV "
                            f"({getattr(benchmark, 'data_dir', None) or 'none'}); use feature kind g2v-10d or g2v-50d "
                            "(computed from the cells)")
        lacking = np.flatnonzero(np.isnan(shipped).any(axis=1))
        if len(lacking):
            raise UserError(f"the features CSV has no row for {len(lacking)} of the {benchmark.search.n} cells "
                            f"(ids {', '.join(str(i) for i in benchmark.search.ids[lacking[:3]])}"
                            f"{', ...' if len(lacking) > 3 else ''}); use feature kind g2v-10d or g2v-50d")
        memo = _MEMO.get(("shipped", id(shipped)))
        if memo is not None and memo[0] is shipped:
            return memo[1]
        matrix = immutable(np.asarray(shipped, dtype=np.float64))
        _MEMO[("shipped", id(shipped))] = (shipped, matrix)
        return matrix
    return g2v_features(benchmark, G2V_DIMS[kind], DEFAULT_SEED)


def _offers_graph2vec(benchmark) -> bool:
    """graph2vec embeds recurrent cells: a table of cells (its catalog entry says so), or one without a space."""
    from benchmarks.core.catalog import BENCHMARKS

    spec = BENCHMARKS.get(benchmark.name)
    if spec is not None:
        return "graph2vec" in spec.offers
    space = getattr(benchmark.search, "space", None)
    return space is None or space.name == "cells"


def used_kind(benchmark_name: str, kind: str) -> str:
    """The kind actually read for `kind` on a benchmark: its catalog stand-in where the release ships
    no file (wt2: g2v-10d for shipped-10d), else `kind` itself."""
    from benchmarks.core.catalog import BENCHMARKS

    spec = BENCHMARKS.get(benchmark_name)
    return dict(spec.feature_stand_ins).get(kind, kind) if spec is not None else kind


def g2v_cache_path(benchmark, dims: int, seed: int = DEFAULT_SEED) -> Path:
    """Where our graph2vec matrix of `benchmark` for (dims, seed) is cached."""
    from benchmarks.cells.graph2vec import ALGORITHM_VERSION
    from benchmarks.core.paths import cache_dir

    return (cache_dir() / "features" /
            f"{benchmark.name}-{benchmark.checksum[:16]}-{ALGORITHM_VERSION}-d{dims}-s{seed}.npz")


def _read_cache(path: Path, benchmark, dims: int) -> np.ndarray | None:
    """The cached matrix if `path` holds a valid one for `benchmark`, else None."""
    from benchmarks.cells.graph2vec import ALGORITHM_VERSION

    try:
        with np.load(path, allow_pickle=False) as data:
            matrix = np.asarray(data["features"], dtype=np.float64)
            ids = np.asarray(data["ids"])
            version = str(data["version"])
            kernel = str(data["blas_kernel"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    # gensim's sums run in OpenBLAS: a matrix built with other kernels (or before they were recorded)
    # differs in the last digits, enough to change a model-based search, so it is rebuilt
    ok = (matrix.shape == (benchmark.search.n, dims) and np.isfinite(matrix).all()
          and version == ALGORITHM_VERSION and kernel == _kernel() and np.array_equal(ids, benchmark.search.ids))
    return matrix if ok else None


def is_g2v_cached(benchmark, dims: int, seed: int = DEFAULT_SEED) -> bool:
    """Whether a valid cache file of our graph2vec for (benchmark, dims, seed) exists."""
    path = g2v_cache_path(benchmark, dims, seed)
    return path.exists() and _read_cache(path, benchmark, dims) is not None


def g2v_features(benchmark, dims: int, seed: int = DEFAULT_SEED, rebuild: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Our graph2vec [n, dims] of `benchmark` from the cache, building (and caching) it if needed.

    `progress(done_epochs, epochs)` reports training progress when a build happens.
    """
    from benchmarks.core.atomic import save_npz_atomic
    from benchmarks.cells.graph2vec import ALGORITHM_VERSION, build_graph2vec

    path = g2v_cache_path(benchmark, dims, seed)
    stamp = _stamp(path)
    memo = _MEMO.get(path)
    if not rebuild and memo is not None and memo[0] == stamp:
        return memo[1]
    matrix = None if rebuild or stamp is None else _read_cache(path, benchmark, dims)
    if matrix is None:
        with _build_lock(path):      # another process building the same matrix: wait for it, then read it
            matrix = None if rebuild else _read_cache(path, benchmark, dims)
            if matrix is None:
                started = time.perf_counter()
                matrix = build_graph2vec(benchmark.search.recipes, dims, seed=seed, progress=progress)
                save_npz_atomic(path, features=matrix, ids=np.asarray(benchmark.search.ids),
                                version=np.array(ALGORITHM_VERSION), seed=np.array(seed),
                                blas_kernel=np.array(_kernel()), build_s=np.array(time.perf_counter() - started))
    matrix = immutable(matrix)              # shared by every trial in this process: nothing may change it
    _MEMO[path] = (_stamp(path), matrix)
    return matrix


@contextmanager
def _build_lock(path: Path):
    """Hold an exclusive lock (fcntl.flock on `<path>.lock`) while a matrix is built: two processes that
    need the same features at once (two runs, or the workers of a test run sharing a cache) build them
    once, the second reading what the first wrote. A cache folder that cannot hold the lock file builds
    without it (the write is atomic either way)."""
    import fcntl

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_name(path.name + ".lock"), "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _kernel() -> str:
    """OpenBLAS's kernel set in this process ('Haswell' where nasbench pinned it), or 'unknown'."""
    from benchmarks.core.blas_kernels import active_kernel

    return active_kernel() or "unknown"


def _stamp(path: Path):
    """(mtime_ns, size) of `path`, or None if missing: a memoised matrix is reused only while it holds."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def feature_cache_info(benchmark) -> dict:
    """Per kind: whether it is available/cached, its shape and cache path (the `features info` payload)."""
    kinds = {}
    space = getattr(benchmark.search, "space", None)
    graph2vec = _offers_graph2vec(benchmark)
    for kind, description in FEATURE_KINDS.items():
        entry = {"description": description}
        if kind in ENCODING_KINDS or not graph2vec:
            available = space is not None and kind == space.encoding_kind
            shape = [benchmark.search.n, len(space.encode(space.parse(benchmark.search.recipe(0))))] \
                if available else None
            entry.update(available=available, cached=available, shape=shape, path=None)
        elif kind == "shipped-10d" and used_kind(benchmark.name, kind) != kind:
            entry.update(available=True, stands_in=used_kind(benchmark.name, kind), cached=False, shape=None,
                         path=None)
        elif kind == "shipped-10d":
            shipped = benchmark.search.shipped_features
            entry.update(available=shipped is not None, cached=shipped is not None,
                         shape=None if shipped is None else list(shipped.shape),
                         path=None if shipped is None else str(benchmark.cache_path))
        else:
            dims = G2V_DIMS[kind]
            path = g2v_cache_path(benchmark, dims)
            matrix = _read_cache(path, benchmark, dims) if path.exists() else None
            entry.update(available=True, cached=matrix is not None,
                         shape=None if matrix is None else list(matrix.shape), path=str(path),
                         corrupt=path.exists() and matrix is None)
        kinds[kind] = entry
    return {"benchmark": benchmark.name, "checksum_sha256": benchmark.checksum, "kinds": kinds}
