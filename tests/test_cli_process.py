"""The tests' forked `nasbench` (tests/cli_process.py) answers as the real command does: same exit
code, stdout, stderr and files, a timeout raised as subprocess's, and its own zygote for a call whose
load-time variables differ."""
import json
import os
import subprocess
import sys

import pytest

import cli_process

NASBENCH = [sys.executable, "-m", "nasbench_cli.main"]


def both(args, **kwargs):
    forked = cli_process.run(NASBENCH + args, capture_output=True, text=True, **kwargs)
    real = subprocess.run(NASBENCH + args, capture_output=True, text=True, **kwargs)
    return forked, real


@pytest.mark.parametrize("args", [["--version"], ["list", "--json"], ["run", "--algo", "hbb"],
                                  ["data", "info", "--benchmark", "wt2", "--json"], ["report", "--no-such"]])
def test_a_forked_command_answers_as_the_real_one(args, tmp_path):
    forked, real = both(args, cwd=tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)


def test_a_forked_run_writes_the_real_runs_files(tmp_path):
    forked, real = (runner(NASBENCH + ["run", "--benchmark", "wt2", "--algo", "rs,hb", "--trials", "2", "--json",
                                       "--out", str(tmp_path / name)], capture_output=True, text=True)
                    for runner, name in ((cli_process.run, "forked"), (subprocess.run, "real")))
    assert forked.returncode == real.returncode == 0, forked.stderr + real.stderr
    files = {name: sorted(p.relative_to(tmp_path / name) for p in (tmp_path / name).rglob("trial-*.json"))
             for name in ("forked", "real")}
    assert files["forked"] == files["real"] and len(files["real"]) == 4
    for path in files["real"]:
        forked_record, real_record = (json.loads((tmp_path / name / path).read_text()) for name in ("forked", "real"))
        for measured in ("compute_s", "wall_s"):            # this machine's seconds, not the trial's result
            assert forked_record.pop(measured) > 0 and real_record.pop(measured) > 0
        assert forked_record == real_record


def test_environment_working_folder_and_stdin_reach_the_command(tmp_path):
    env = {**os.environ, "NASBENCH_CACHE": str(tmp_path / "cache-file" / "sub")}
    (tmp_path / "cache-file").write_text("x")
    forked = cli_process.run(NASBENCH + ["data", "info", "--benchmark", "wt2"], capture_output=True, text=True,
                             env=env, input="ignored\n")
    assert forked.returncode == 2 and "cannot use the cache folder" in forked.stderr


def test_a_timeout_kills_the_command_and_raises_as_subprocess_does(tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        cli_process.run(NASBENCH + ["run", "--benchmark", "ptb", "--algo", "bo50d", "--trials", "5",
                                    "--out", str(tmp_path)], capture_output=True, text=True, timeout=0.5)
    after = cli_process.run(NASBENCH + ["--version"], capture_output=True, text=True)   # the zygote lives on
    assert after.returncode == 0 and "nasbench" in after.stdout


def test_a_call_with_other_load_time_variables_gets_its_own_zygote():
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "3" if os.environ.get("OPENBLAS_NUM_THREADS") != "3" else "2"}
    cli_process.run(NASBENCH + ["--version"], capture_output=True, text=True)
    cli_process.run(NASBENCH + ["--version"], capture_output=True, text=True, env=env)
    keys = list(cli_process._ZYGOTES)
    assert cli_process._load_time_variables(env) in keys and cli_process._load_time_variables(dict(os.environ)) in keys
    assert all(z.process.poll() is None for z in cli_process._ZYGOTES.values())
