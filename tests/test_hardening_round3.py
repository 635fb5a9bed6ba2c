"""Hardening, round three (the items that are done): settings checked against the table for every
algorithm before anything runs."""
import subprocess
import sys

from benchmarks.core.paths import REPO_ROOT


def nasbench(*args):
    return subprocess.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True)


def test_a_setting_the_table_refutes_stops_the_run_before_any_trial_is_written(tmp_path):
    """A gpt-l copy with 5 observations: `re`'s population of 10 cannot be drawn. Before, `--algo rs,re`
    wrote rs's trials and then stopped; now nothing is written and the one line names re."""
    data = tmp_path / "gpt-l"
    data.mkdir()
    source = REPO_ROOT.parent / "shared" / "hw-gpt-bench"
    lines = (source / "gpt_l_observations.jsonl").read_text().splitlines()[:5]
    (data / "gpt_l_observations.jsonl").write_text("\n".join(lines) + "\n")
    (data / "owt_l_eval.yaml").write_text((source / "owt_l_eval.yaml").read_text())
    out = tmp_path / "out"
    result = nasbench("run", "--benchmark", "gpt-l", "--data-dir", str(data), "--algo", "rs,re", "--trials", "2",
                      "--out", str(out))
    assert result.returncode == 2 and result.stderr.strip() == "error: re population 10 exceeds the 5 architectures"
    assert not list(out.rglob("trial-*.json"))
    lcbo = nasbench("run", "--algo", "rs10e,lcbo", "--set", "lcbo.rungs=1,2,9,60", "--trials", "1",
                    "--out", str(tmp_path / "out2"))
    assert lcbo.returncode == 2 and "last rung (60 epochs) exceeds" in lcbo.stderr
    assert not list((tmp_path / "out2").rglob("trial-*.json"))


def test_a_killed_runs_progress_folder_is_removed_by_the_next_run(tmp_path, monkeypatch):
    """kill -9 of a run at a terminal left its nasbench-progress-* folder in the temp folder for good; the
    folder is now named by the run's pid, and a later run removes those of runs that are gone."""
    import os
    import tempfile

    from nasbench_cli.harness import runner

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"{runner.PROGRESS_PREFIX}{int(gone.stdout)}-abc"
    live = tmp_path / f"{runner.PROGRESS_PREFIX}{os.getpid()}-def"
    other = tmp_path / "nasbench-progress-notapid"
    for folder in (dead, live, other):
        folder.mkdir()
        (folder / "hb-0").write_text("1 2 3")
    assert runner.remove_stale_progress_folders() == 1
    assert not dead.exists() and live.is_dir() and other.is_dir()


def test_a_trial_file_that_is_a_folder_gets_advice_that_fits(tmp_path):
    import pytest

    from benchmarks.core.atomic import write_json_atomic
    from benchmarks.core.errors import UserError

    (tmp_path / "trial-0.json").mkdir()
    with pytest.raises(UserError, match="a folder of that name is in the way") as raised:
        write_json_atomic(tmp_path / "trial-0.json", {"a": 1})
    assert "free space" not in str(raised.value)
