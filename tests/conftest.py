"""Shared fixtures: the real NAS-Bench-NLP data from ../shared, and an isolated cache folder.

The whole test session uses one private cache folder (NASBENCH_CACHE), so tests never touch the
user's cache and the packed cache is built once per session from the real logs.
"""
import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import benchmarks  # noqa: F401  (before any test module imports numpy: pins the BLAS kernels)

_SESSION_CACHE = tempfile.mkdtemp(prefix="nasbench-test-cache-")
os.environ["NASBENCH_CACHE"] = _SESSION_CACHE   # always: never the user's own cache, even if set
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)   # about 40 MB per session


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
