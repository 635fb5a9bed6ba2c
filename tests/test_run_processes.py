"""`nasbench run` as processes: workers die with a killed run, SIGTERM stops it cleanly, one run per
results folder at a time, and absurd --trials / --jobs are handled up front."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nasbench_cli.harness.run_lock import run_lock

import cli_process

# bo10d trials of 300 h take a few seconds each: long enough to catch the run mid-way
SLOW_RUN = ["run", "--algo", "bo10d", "--trials", "6", "--budget-hours", "300", "--jobs", "2"]


def nasbench(*args, **kwargs):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          **kwargs)


def start(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nasbench_cli.main", *SLOW_RUN, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def alive_children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is `pid`, from /proc."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                children.append(int(entry.name))
    return children


def is_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for_workers(proc: subprocess.Popen, timeout_s: float = 60) -> list[int]:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        workers = [p for p in alive_children(proc.pid)
                   if "popen_loky" in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace")]
        if len(workers) == 2:
            return workers
        time.sleep(0.05)
    raise AssertionError("the run did not start its two worker processes")


def test_kill_9_of_the_run_ends_its_workers(tmp_path, ptb):
    proc = start(tmp_path)
    workers = wait_for_workers(proc)
    os.kill(proc.pid, signal.SIGKILL)                     # the run only, not its process group
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and any(is_alive(p) for p in workers):
        time.sleep(0.05)
    assert not any(is_alive(p) for p in workers), "worker processes outlived the killed run"
    files = sorted(tmp_path.rglob("trial-*.json"))
    time.sleep(1.5)
    assert sorted(tmp_path.rglob("trial-*.json")) == files   # nobody is writing any more


@pytest.mark.slow
def test_sigterm_stops_the_run_like_ctrl_c(tmp_path, ptb):
    proc = start(tmp_path)
    workers = wait_for_workers(proc)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert "terminated:" in stderr and "Traceback" not in stderr
    deadline = time.time() + 10
    while time.time() < deadline and any(is_alive(p) for p in workers):
        time.sleep(0.05)
    assert not any(is_alive(p) for p in workers)
    for path in tmp_path.rglob("trial-*.json"):           # whatever finished is complete
        json.loads(path.read_text())


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_holds_it(tmp_path, ptb):
    with run_lock(tmp_path, "ptb"):
        refused = nasbench("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "10", "--out", str(tmp_path))
    assert refused.returncode == 2
    assert f"another `nasbench run` (pid {os.getpid()}) is writing to" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    # the lock dies with its holder: the same run goes through now
    ran = nasbench("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "10", "--out", str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "ptb" / "rs50e" / "trial-0.json").is_file()


def test_report_on_a_folder_whose_run_has_not_finished_a_trial_says_so(tmp_path):
    with run_lock(tmp_path, "wt2"):
        early = nasbench("report", str(tmp_path))
        inside = nasbench("report", str(tmp_path / "wt2"))          # the benchmark's folder itself
    assert inside.returncode == 2 and f"(pid {os.getpid()}) is writing to {tmp_path / 'wt2'}" in inside.stderr
    assert early.returncode == 2 and len(early.stderr.strip().splitlines()) == 1
    assert f"no trial has finished yet under {tmp_path}: a `nasbench run` (pid {os.getpid()}) is writing to " \
           f"{tmp_path / 'wt2'}" in early.stderr
    after = nasbench("report", str(tmp_path))            # the lock file stays; nobody holds it now
    assert after.returncode == 2 and "no result files under" in after.stderr and "pid" not in after.stderr


def test_an_unwritable_out_is_refused_before_any_trial_runs(tmp_path, ptb):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    result = nasbench("run", "--algo", "hb", "--trials", "1", "--out", str(blocker / "results"))
    assert result.returncode == 2
    assert "cannot write to the results folder" in result.stderr and "Traceback" not in result.stderr


def test_absurd_trials_are_refused_and_jobs_are_capped_at_the_trials(tmp_path, ptb):
    refused = nasbench("run", "--algo", "hb", "--trials", "1000000000", "--out", str(tmp_path))
    assert refused.returncode == 2 and "--trials" in refused.stderr
    capped = nasbench("run", "--algo", "rs50e", "--trials", "2", "--budget-hours", "10", "--jobs", "1000",
                      "--out", str(tmp_path), timeout=120)
    assert capped.returncode == 0, capped.stderr
    assert "more than the" in capped.stderr
    assert len(list((tmp_path / "ptb" / "rs50e").glob("trial-*.json"))) == 2


def test_the_default_number_of_processes_is_nasbench_jobs_else_the_cores_here(tmp_path, ptb, monkeypatch):
    """Without --jobs a run starts $NASBENCH_JOBS processes (this suite sets 1, conftest.py), else one per core
    this process may use; anything but a positive whole number there is one line, before any work."""
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness.cores import available_cores, default_jobs

    monkeypatch.delenv("NASBENCH_JOBS", raising=False)
    assert default_jobs() == available_cores() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("NASBENCH_JOBS", " 3 ")
    assert default_jobs() == 3
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("NASBENCH_JOBS", bad)
        with pytest.raises(UserError, match="NASBENCH_JOBS="):
            default_jobs()
    refused = nasbench("run", "--algo", "rs50e", "--trials", "2", "--budget-hours", "10", "--out", str(tmp_path),
                       env={**os.environ, "NASBENCH_JOBS": "many"})
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "NASBENCH_JOBS='many'" in refused.stderr
    assert not list(tmp_path.rglob("trial-*.json"))


def test_without_a_terminal_each_finished_trial_is_a_log_line(tmp_path, ptb):
    """Under nohup or CI the progress bar draws only at the end; a line per trial shows how far the run is."""
    logged = nasbench("run", "--algo", "rs", "--trials", "2", "--budget-hours", "10", "--jobs", "1",
                      "--out", str(tmp_path / "a"), timeout=120)
    assert logged.returncode == 0, logged.stderr
    lines = [line for line in logged.stderr.splitlines() if line.startswith("ptb trials ") and "CPU s" in line]
    assert [line.split()[2] for line in lines] == ["1/2", "2/2"], logged.stderr
    records = {json.loads(p.read_text())["trial"]: json.loads(p.read_text())
               for p in (tmp_path / "a" / "ptb" / "rs").glob("trial-*.json")}
    for line in lines:
        trial = int(line.split(" rs #")[1].split(":")[0])
        assert f"regret {records[trial]['final_regret']:.4f}, " in line
    quiet = nasbench("run", "--algo", "rs", "--trials", "2", "--budget-hours", "10", "--jobs", "1", "--json",
                     "--out", str(tmp_path / "b"), timeout=120)
    assert quiet.returncode == 0 and "ptb trials" not in quiet.stderr and json.loads(quiet.stdout)["ran"] == 2
