"""Shared fixtures: the real NAS-Bench-NLP data from ../shared, and an isolated cache folder.

Every test process has its own private cache folder (NASBENCH_CACHE), so tests never touch the
user's cache and never each other's: with pytest-xdist (`-n auto`, the README's test command) each
worker process gets one. The packed tables of the real data (ptb, wt2, gpt-s/m/l) and the cells'
canonical hashes are built once per test run, by a process the controller starts while the workers
start and collect the tests (the build takes about 10 CPU s), and copied into each worker's cache
as read-only files before its first test: built once, never rebuilt by a worker, and not changeable
by one test for another. The graph2vec features are the one shared folder: built once
per test run by the first worker that needs them (see `pytest_configure_node`).

Tests run `nasbench` through `cli_process.run`, a drop-in for `subprocess.run` that forks each command
from a warmed interpreter (about 0.9 CPU s less per command; see tests/cli_process.py).
"""
import atexit
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

# Bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set (some CI images set it): the test
# command installs without compiling (uv's default; about 45 s less installing), so each module is compiled once,
# on its first import, and its cache read by every later process. With the variable set, every one of the
# suite's several hundred fresh interpreters (loky workers, real subprocesses) would compile all it imports.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)    # before any process starts: xdist workers inherit it
sys.dont_write_bytecode = False

import pytest  # noqa: E402

import benchmarks  # noqa: F401  (before any test module imports numpy: pins the BLAS kernels)

# A run without --jobs starts one trial process, not one per core: the suite already runs one test per core
# (pytest-xdist), so a second process per run only competes with the other test and imports the
# algorithms' libraries (SMAC, XGBoost, torch: 2-4 CPU s each) twice. Tests of parallel trials pass --jobs.
os.environ["NASBENCH_JOBS"] = "1"

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


def _prebuild_in_background(folder: str) -> None:
    """Start `_prebuild(folder)` in a process of its own; it leaves an empty `folder`.done when it has
    built everything, or `folder`.failed when it has not, its output in `folder`.log (see
    `_wait_for_prebuild`)."""
    import subprocess

    code = ("import sys; sys.path.insert(0, sys.argv[2]); import conftest\n"
            "try:\n    conftest._prebuild(sys.argv[1])\n"
            "except BaseException:\n    open(sys.argv[1] + '.failed', 'w').close()\n    raise\n"
            "open(sys.argv[1] + '.done', 'w').close()")
    for suffix in (".done", ".failed", ".log"):
        atexit.register(lambda path=folder + suffix: os.path.exists(path) and os.remove(path))
    log = open(folder + ".log", "wb")
    process = subprocess.Popen([sys.executable, "-c", code, folder, str(Path(__file__).parent)], stdout=log,
                               stderr=subprocess.STDOUT, env={**os.environ, "NASBENCH_CACHE": folder})
    log.close()

    def _reap() -> None:              # the controller ends the run: never leave the build running
        if process.poll() is None:
            process.kill()
        process.wait()
    atexit.register(_reap)
    _PREBUILD.append(process)


def _wait_for_prebuild(folder: str, timeout_s: float = 900.0) -> bool:
    """Wait until the controller's prebuild process has finished `folder`: True when it built
    everything, False when it failed (or took longer than `timeout_s`)."""
    import time

    deadline = time.monotonic() + timeout_s
    while not os.path.exists(folder + ".done"):
        if os.path.exists(folder + ".failed") or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


_PREBUILD: list = []     # the controller's prebuild process


def _copy_read_only(source: str, target: str) -> None:
    """The prebuilt cache files of `source` into `target`, each made read-only (a test that wants to
    change a cache file must copy it to a folder of its own)."""
    for path in Path(source).rglob("*"):
        if path.is_file():
            destination = Path(target) / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            destination.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


_SHARED_FEATURES: list = []   # the controller's folder of graph2vec matrices shared by its workers


def pytest_configure(config):
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:                      # an xdist worker: the controller built them
        if worker_input.get("nasbench_features"):
            os.symlink(worker_input["nasbench_features"], Path(_SESSION_CACHE) / "features")
    elif getattr(config.option, "numprocesses", None) and not config.option.collectonly:
        _prebuild_in_background(_SESSION_CACHE)       # the controller of an xdist run: once for all workers
        _SHARED_FEATURES.append(tempfile.mkdtemp(prefix="nasbench-test-features-"))
        atexit.register(shutil.rmtree, _SHARED_FEATURES[0], ignore_errors=True)


def pytest_collection_finish(session):
    """xdist worker: after collecting (which ran beside the controller's prebuild), wait for the prebuilt
    caches and copy them in, before the first test."""
    prebuilt = getattr(session.config, "workerinput", {}).get("nasbench_prebuilt")
    if prebuilt and _wait_for_prebuild(prebuilt):        # (if it failed, the controller stops the run)
        _copy_read_only(prebuilt, _SESSION_CACHE)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist (controller): a worker has collected, after the prebuild ended; stop the run, before any
    test, if the prebuild failed."""
    if _PREBUILD and not _wait_for_prebuild(_SESSION_CACHE):
        log = Path(_SESSION_CACHE + ".log")
        pytest.exit("building the real data's packed caches for the test run failed:\n"
                    + (log.read_text(errors="replace")[-3000:] if log.exists() else "(no output)"), returncode=3)


@pytest.hookimpl(optionalhook=True)       # an xdist hook: `pytest -p no:xdist` runs the suite in one process
def pytest_configure_node(node):
    """xdist (controller): tell each worker where the prebuilt cache is, and where the graph2vec
    features live. Those are built on first use (35-45 s each on PTB, too long to build up front) by
    whichever worker needs them first, under a lock (`benchmarks.core.features`), and read by the
    others: one folder for the whole run, written only by that build (atomically), its files the
    same whichever worker writes them."""
    node.workerinput["nasbench_prebuilt"] = _SESSION_CACHE
    if _SHARED_FEATURES:
        node.workerinput["nasbench_features"] = _SHARED_FEATURES[0]


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


# Test modules by the CPU time they took (self + subprocesses + forked commands, rusage on the 2-core
# machine CI resembles), heaviest first. xdist hands whole modules to workers in collection order
# (`--dist loadscope`, its reordering by test count switched off below): starting the long ones first
# keeps one worker from running a 100-s module alone at the end. Modules not named keep their order.
HEAVIEST_FIRST = ("test_simulator", "test_multi_objective", "test_gpt", "test_hardening_round2", "test_runner",
                  "test_regression_gate", "test_proxies_cli", "test_out_of_the_box", "test_dpl", "test_dask_backend",
                  "test_commands_agree", "test_nmt", "test_bert", "test_smac", "test_dyhpo", "test_suites")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))      # stable: the rest as collected


@pytest.hookimpl(trylast=True, optionalhook=True)
def pytest_xdist_setupnodes(config, specs):
    """xdist (controller): keep the order above (its own reorders modules by their number of tests)."""
    config.option.loadscopereorder = False
