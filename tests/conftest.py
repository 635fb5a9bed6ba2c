"""Shared fixtures: the real NAS-Bench-NLP data from ../shared, and an isolated cache folder.

Every test process has its own private cache folder (NASBENCH_CACHE), so tests never touch the
user's cache and never each other's: with pytest-xdist (`-n auto`, the README's test command) each
worker process gets one. The packed tables of the real data (ptb, wt2, gpt-s/m/l) and the cells'
canonical hashes are built once per test run, in the controlling process before the workers start,
and copied into each worker's cache as read-only files: built once, never rebuilt by a worker, and
not changeable by one test for another.
"""
import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

import benchmarks  # noqa: F401  (before any test module imports numpy: pins the BLAS kernels)

_SESSION_CACHE = tempfile.mkdtemp(prefix="nasbench-test-cache-")
os.environ["NASBENCH_CACHE"] = _SESSION_CACHE   # always: never the user's own cache, even if set
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)   # about 40 MB per process

PREBUILT = ("ptb", "wt2", "gpt-s", "gpt-m", "gpt-l")   # packed tables every worker would otherwise build


def _prebuild(folder: str) -> None:
    """Build the packed caches of the real data into `folder` (this process's cache) once."""
    from benchmarks.cells.canonical import benchmark_hashes
    from benchmarks.core.registry import load_benchmark

    for name in PREBUILT:
        benchmark = load_benchmark(name)
        if name in ("ptb", "wt2"):
            benchmark_hashes(benchmark)


def _copy_read_only(source: str, target: str) -> None:
    """The prebuilt cache files of `source` into `target`, each made read-only (a test that wants to
    change a cache file must copy it to a folder of its own)."""
    for path in Path(source).rglob("*"):
        if path.is_file():
            destination = Path(target) / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            destination.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def pytest_configure(config):
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:                      # an xdist worker: the controller built them
        if worker_input.get("nasbench_prebuilt"):
            _copy_read_only(worker_input["nasbench_prebuilt"], _SESSION_CACHE)
    elif getattr(config.option, "numprocesses", None) and not config.option.collectonly:
        _prebuild(_SESSION_CACHE)                     # the controller of an xdist run: once for all workers


def pytest_configure_node(node):
    """xdist (controller): tell each worker where the prebuilt cache is."""
    node.workerinput["nasbench_prebuilt"] = _SESSION_CACHE


@pytest.fixture(scope="session")
def data_dir() -> Path:
    from benchmarks.core.paths import resolve_data_dir

    return resolve_data_dir(None)


@pytest.fixture(scope="session")
def ptb(data_dir):
    """The real PTB benchmark (14,322 architectures)."""
    from benchmarks.core.registry import load_benchmark

    return load_benchmark("ptb", data_dir)


@pytest.fixture(scope="session")
def wt2(data_dir):
    from benchmarks.core.registry import load_benchmark

    return load_benchmark("wt2", data_dir)


@pytest.fixture(scope="session")
def bert():
    """NAS-Bench-BERT's 500 FlexiBERT transformers (../shared/training-free-nas)."""
    from benchmarks.core.registry import load_benchmark

    return load_benchmark("bert")
