"""`nasbench run --backend dask` on real LocalClusters and on a scheduler and workers started as processes:
the same files as the local backend, byte for byte (timings aside); inputs shipped from the client, so
workers need no data folder or cache; a killed worker, a lost scheduler, Ctrl-C and kill -9 of the run."""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="distributed not installed")

from test_run_processes import alive_children, is_alive, nasbench  # noqa: E402

TIMINGS = ("compute_s", "wall_s")      # CPU and wall seconds: the only fields that differ run to run

SLOW_PLUGIN = '''
import time
from dataclasses import dataclass

from optimizers.baselines.random_search import RandomSearch


class SlowRandomSearch(RandomSearch):
    """rs10e that sleeps sleep_s real seconds before each ask: trials long enough to interrupt."""
    name = "slowrs"

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 10
        sleep_s: float = 0.0

    def ask(self):
        time.sleep(self.settings.sleep_s)
        return super().ask()
'''


def comparable(path: Path) -> dict:
    return {k: v for k, v in json.loads(path.read_text()).items() if k not in TIMINGS}


def assert_same_files(local: Path, dask: Path, expected: int) -> None:
    files = sorted(p.relative_to(local) for p in local.rglob("trial-*.json"))
    assert len(files) == expected
    assert files == sorted(p.relative_to(dask) for p in dask.rglob("trial-*.json"))
    for name in files:
        assert comparable(local / name) == comparable(dask / name), name
    assert not list(dask.rglob("*.tmp"))


def slow_plugin(tmp_path: Path) -> str:
    path = tmp_path / "slow_plugin.py"
    path.write_text(SLOW_PLUGIN)
    return f"{path}:SlowRandomSearch"


def slow_run_args(plugin: str, out: Path, trials: int = 6) -> list[str]:
    """About 1 s per trial (216 asks of 5 ms at 100 h)."""
    return ["run", "--algo", plugin, "--set", "sleep_s=0.005", "--label", "slowrs", "--trials", str(trials),
            "--budget-hours", "100", "--out", str(out)]     # --label: a changed setting would name the run otherwise


def dask_worker_processes(pid: int) -> list[int]:
    """The LocalCluster worker processes of the run `pid` (spawned by its in-process nannies)."""
    return [p for p in alive_children(pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]


def start_run(args) -> subprocess.Popen:
    """The run as a process with SIGINT at its default (a shell running pytest in the background ignores
    SIGINT, and children inherit that), so the test's Ctrl-C reaches Python as KeyboardInterrupt."""
    return subprocess.Popen([sys.executable, "-m", "nasbench_cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_files(folder: Path, count: int, timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while len(list(folder.glob("trial-*.json"))) < count:
        assert time.time() < deadline, f"fewer than {count} result files in {folder} after {timeout_s} s"
        time.sleep(0.05)


def wait_gone(pids, timeout_s: float = 30) -> None:
    deadline = time.time() + timeout_s
    while any(is_alive(p) for p in pids):
        assert time.time() < deadline, f"processes still alive: {[p for p in pids if is_alive(p)]}"
        time.sleep(0.1)


# -- byte for byte ----------------------------------------------------------------------------------

def test_dask_writes_the_same_files_as_the_local_backend(tmp_path, ptb):
    """Three algorithms at one worker (SMAC, whose results depend on string hashing, and bo10d, whose
    features ship from the client), three at 3 simulated workers (resuming is tested with the faults
    below), and lcbo ended at the table's best (`--stop-at-best`, seed 4: the LSTM at 32 h). Kept small
    for CI's time; `scripts/bench_dask_backend.py` compares the paper's eight."""
    local, dask = tmp_path / "local", tmp_path / "dask"
    suites = [["--algo", "rs10e,smac,bo10d", "--trials", "1", "--budget-hours", "30"],
              ["--algo", "asha,hb,re", "--workers", "3", "--trials", "1", "--budget-hours", "20"],
              ["--algo", "lcbo", "--seed", "4", "--trials", "1", "--budget-hours", "60", "--stop-at-best"]]
    for suite in suites:
        ran_local = nasbench("run", *suite, "--out", str(local), "--json")
        assert ran_local.returncode == 0, ran_local.stderr
        ran_dask = nasbench("run", *suite, "--backend", "dask", "--scheduler", "local:2", "--out", str(dask),
                            "--json")
        assert ran_dask.returncode == 0, ran_dask.stderr
        summaries = [{label: {k: v for k, v in s.items() if k != "compute_s_per_trial"}
                      for label, s in json.loads(r.stdout)["algorithms"].items()} for r in (ran_local, ran_dask)]
        assert summaries[0] == summaries[1]
    assert_same_files(local, dask, 7)
    assert 30 * 3600 < json.loads((dask / "ptb" / "lcbo" / "trial-0.json").read_text())["stopped_at_best_s"] < 35 * 3600


# -- faults on a LocalCluster --------------------------------------------------------------------------

@pytest.mark.slow
def test_a_killed_worker_costs_nothing(tmp_path, ptb):
    """kill -9 of the only worker process mid-trial (it holds the only copy of the scattered inputs):
    the nanny restarts it, the inputs are scattered again, the trials rerun, and the files are those of
    a local run."""
    plugin = slow_plugin(tmp_path)
    out = tmp_path / "dask"
    run = start_run(slow_run_args(plugin, out, trials=4) + ["--backend", "dask", "--scheduler", "local:1"])
    wait_for_files(out / "ptb" / "slowrs", 1)
    workers = dask_worker_processes(run.pid)
    assert len(workers) == 1
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = run.communicate(timeout=180)
    assert run.returncode == 0, stderr
    assert_same_trials(tmp_path, plugin, out, 4)


def assert_same_trials(tmp_path: Path, plugin: str, out: Path, trials: int) -> None:
    """The trials in `out` are those of a local run of the plugin without its sleep (so quick): the same
    trajectories and job logs (only the sleep setting, and so the settings hash, differ)."""
    local = tmp_path / f"local-{time.time_ns()}"
    ran = nasbench(*slow_run_args(plugin, local, trials), "--set", "sleep_s=0", "--jobs", "2")
    assert ran.returncode == 0, ran.stderr
    assert len(list((out / "ptb" / "slowrs").glob("trial-*.json"))) == trials
    for k in range(trials):
        a, b = (comparable(folder / "ptb" / "slowrs" / f"trial-{k}.json") for folder in (out, local))
        assert a["trajectory"] == b["trajectory"] and a["jobs"] == b["jobs"] and a["seed"] == b["seed"]
    assert not list(out.rglob("*.tmp"))


@pytest.mark.slow
def test_ctrl_c_and_kill_keep_finished_trials_and_a_rerun_completes(tmp_path, ptb):
    plugin = slow_plugin(tmp_path)
    out = tmp_path / "dask"
    args = slow_run_args(plugin, out) + ["--backend", "dask", "--scheduler", "local:2"]
    folder = out / "ptb" / "slowrs"

    run = start_run(args)                                 # Ctrl-C: futures cancelled, cluster shut down
    wait_for_files(folder, 1)
    workers = dask_worker_processes(run.pid)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    assert "interrupted" in stderr and "rerun the same command" in stderr and "Traceback" not in stderr
    wait_gone(workers)
    kept = len(list(folder.glob("trial-*.json")))
    assert 1 <= kept < 6 and not list(folder.glob("*.tmp"))

    run = start_run(args)                                 # kill -9: the worker processes follow it
    wait_for_files(folder, kept + 1)
    workers = dask_worker_processes(run.pid)
    assert len(workers) == 2
    run.kill()
    run.communicate(timeout=30)
    wait_gone(workers)
    for path in folder.glob("trial-*.json"):              # only complete files
        json.loads(path.read_text())

    done = start_run(args + ["--json"])
    stdout, stderr = done.communicate(timeout=180)
    assert done.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["ran"] + summary["skipped"] == 6 and summary["skipped"] >= kept + 1
    assert_same_trials(tmp_path, plugin, out, 6)


# -- a scheduler and workers started as processes --------------------------------------------------------

def start_scheduler(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    info = tmp_path / f"scheduler-{time.time_ns()}.json"
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file", str(info),
                             "--port", "0", "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not info.is_file() or not info.read_text().strip():
        assert time.time() < deadline, "the scheduler did not start"
        time.sleep(0.1)
    return proc, json.loads(info.read_text())["address"]


def start_workers(address: str, tmp_path: Path, preload: bool = True) -> subprocess.Popen:
    """Two worker processes that cannot see the data or this run's caches."""
    env = dict(os.environ, NASBENCH_DATA=str(tmp_path / "no-data-here"), NASBENCH_CACHE=str(tmp_path / "no-cache"))
    env.pop("PYTHONHASHSEED", None)
    extra = ["--preload-nanny", "nasbench_cli.harness.dask_nanny"] if preload else []
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "2",
                             "--nthreads", "1", "--no-dashboard", *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parent.parent)


def stop(*procs) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
def test_an_external_cluster_needs_no_data_and_survives_losing_its_scheduler(tmp_path, ptb):
    """Workers without the nanny preload are refused; workers that cannot see the data or any cache give
    the local backend's files (features and training-free scores shipped from the client); the scheduler
    killed mid-run is one line with the finished files kept, and another cluster completes the rest."""
    from session_cache import seeded_cache

    cache = seeded_cache(tmp_path / "cache")   # the client's own cache, with training-free scores for prs
    env = dict(os.environ, NASBENCH_CACHE=str(cache))
    built = nasbench("proxies", "build", "--metric", "num_params", "--sample", "300", env=env)
    assert built.returncode == 0, built.stderr
    suite = ["--algo", "rs10e,prs", "--set", "prs.metric=num_params", "--trials", "2", "--budget-hours", "40"]
    plugin = slow_plugin(tmp_path)
    scheduler, address = start_scheduler(tmp_path)
    workers = start_workers(address, tmp_path, preload=False)   # hash randomisation on: refused
    try:
        refused = nasbench("run", "--algo", "rs10e", "--trials", "1", "--budget-hours", "10", "--backend", "dask",
                           "--scheduler", address, "--out", str(tmp_path / "refused"))
    finally:
        stop(workers)
    assert refused.returncode == 2, refused.stderr
    assert "hash randomisation on" in refused.stderr and "--preload-nanny nasbench_cli.harness.dask_nanny" in refused.stderr
    assert "Traceback" not in refused.stderr and not list((tmp_path / "refused").rglob("trial-*.json"))

    workers = start_workers(address, tmp_path)
    try:
        remote = nasbench("run", *suite, "--backend", "dask", "--scheduler", address, "--out",
                          str(tmp_path / "dask"), env=env)
        assert remote.returncode == 0, remote.stderr
        local = nasbench("run", *suite, "--jobs", "2", "--out", str(tmp_path / "local"), env=env)
        assert local.returncode == 0, local.stderr
        assert_same_files(tmp_path / "local", tmp_path / "dask", 4)
        assert json.loads((tmp_path / "dask" / "ptb" / "prs+metric-num_params" / "trial-0.json").read_text())["scored_cells"] == 300

        out = tmp_path / "slow"                            # the scheduler goes away mid-run
        run = start_run(slow_run_args(plugin, out, trials=4) + ["--backend", "dask", "--scheduler", address])
        wait_for_files(out / "ptb" / "slowrs", 1)
        scheduler.kill()
        _, stderr = run.communicate(timeout=120)
        assert run.returncode == 1, stderr
        lines = [line for line in stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and f"lost the Dask scheduler at {address}" in lines[0], stderr
        assert "rerun the same command" in lines[0] and "Traceback" not in stderr
        kept = len(list((out / "ptb" / "slowrs").glob("trial-*.json")))
        assert kept >= 1 and not list(out.rglob("*.tmp"))
    finally:
        stop(workers, scheduler)

    done = nasbench(*slow_run_args(plugin, out, trials=4), "--backend", "dask", "--scheduler", "local:2", "--json")
    assert done.returncode == 0, done.stderr          # another cluster completes the rest
    assert json.loads(done.stdout)["skipped"] == kept
    assert_same_trials(tmp_path, plugin, out, 4)


# -- one-line errors and the checks a worker makes -----------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--backend", "dask", "--jobs", "2"], "--jobs is for the local backend"),
    (["--backend", "dask", "--scheduler", "local:0"], "expected local:N"),
    (["--backend", "dask", "--scheduler", "tcp://a b"], "expected local:N or a scheduler address"),
    (["--scheduler", "local:2"], "--scheduler is for --backend dask"),
])
def test_bad_backend_options_are_one_line(tmp_path, args, message):
    result = nasbench("run", "--algo", "rs10e", "--trials", "1", *args, "--out", str(tmp_path))
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not list(tmp_path.iterdir())


def test_an_unreachable_scheduler_is_one_line(monkeypatch):
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness import dask_backend

    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(UserError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"):
        dask_backend.connect(dask_backend.parse_scheduler("tcp://127.0.0.1:9"))


def test_parse_scheduler(monkeypatch):
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness.cores import available_cores
    from nasbench_cli.harness.dask_backend import parse_scheduler

    assert parse_scheduler("local:3").local_workers == 3
    monkeypatch.delenv("NASBENCH_JOBS", raising=False)
    assert parse_scheduler(None).local_workers == available_cores()
    monkeypatch.setenv("NASBENCH_JOBS", "3")
    assert parse_scheduler("local").local_workers == 3
    assert parse_scheduler("tcp://10.0.0.1:8786").address == "tcp://10.0.0.1:8786"
    for empty in ("tcp://:", "tcp://", "tcp://:8786", "tcp://host:", "tcp://host:99999"):   # at once, one line
        with pytest.raises(UserError, match="expected tcp://HOST:PORT"):
            parse_scheduler(empty)


def test_a_worker_with_other_code_or_versions_is_refused(ptb, monkeypatch):
    """The worker compares its fingerprint with the client's before running anything."""
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness import dask_backend
    from nasbench_cli.results.fingerprint import environment_fingerprint
    from nasbench_cli.harness.run_description import describe_run

    monkeypatch.setattr(dask_backend, "hash_randomisation_on", lambda: False)
    inputs = dask_backend.gather_inputs(ptb, ["rs10e"], {})
    spec = describe_run(["rs10e"], "ptb", budget_hours=10, out=Path("unused")).trial("rs10e", 0)
    record = dask_backend.run_on_worker(spec, inputs)      # unscored: the worker holds no test losses
    assert "final_regret" not in record and record["history"].arch
    from nasbench_cli.results.scoring import score_record
    assert score_record(record, ptb)["final_regret"] > 0
    mine = environment_fingerprint()
    for other, says in [(mine | {"code": "0" * 64}, "other nasbench code"),
                        (mine | {"versions": mine["versions"] | {"numpy": "1.26.4"}}, "numpy"),
                        (mine | {"python": "3.9"}, "Python")]:
        with pytest.raises(UserError, match=says):
            dask_backend.run_on_worker(spec, dask_backend.TrialInputs(inputs.token, inputs.packed, other,
                                                                      inputs.compressed))
    monkeypatch.setattr(dask_backend, "hash_randomisation_on", lambda: True)
    with pytest.raises(UserError, match="hash randomisation on"):
        dask_backend.run_on_worker(spec, inputs)


def test_the_scattered_inputs_are_compressed_and_unpack_to_the_same_data(ptb):
    """The table ships once per worker, compressed, without the client's memoised views (recipes, ids)."""
    import pickle
    from dataclasses import replace

    import numpy as np

    from nasbench_cli.harness.dask_backend import gather_inputs

    ptb.search.recipes, ptb.search._row_of_id    # noqa: B018 (memoise them here)
    inputs = gather_inputs(ptb, ["rs10e", "bo10d"], {})
    raw = gather_inputs(ptb, ["rs10e", "bo10d"], {}, compress=False)      # for a local cluster
    assert len(pickle.dumps(inputs, protocol=5)) < 0.6 * len(pickle.dumps(ptb, protocol=5))
    assert len(pickle.dumps(raw, protocol=5)) < 1.01 * len(pickle.dumps(replace(ptb), protocol=5))
    assert raw.unpack()[0].checksum == ptb.checksum
    benchmark, features, scores = pickle.loads(pickle.dumps(inputs, protocol=5)).unpack()
    assert features == {} and scores == {}              # bo10d's shipped features are in the table
    assert "recipes" not in vars(benchmark.search) and benchmark.checksum == ptb.checksum
    for name in ("train_loss", "val_loss", "wall_time_s", "shipped_features"):
        assert np.array_equal(getattr(benchmark.search, name), getattr(ptb.search, name), equal_nan=True)
    for name in ("ids", "n_epochs", "status", "num_params", "recipe_blob"):
        assert np.array_equal(getattr(benchmark.search, name), getattr(ptb.search, name))
    assert benchmark.test_loss is None                  # workers run searchers: the client scores
