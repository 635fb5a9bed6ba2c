"""Hardening, round two (issue 29): each case below was seen silently wrong, losing data or as a traceback."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.core.errors import DataError, UserError

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={**os.environ})


def one_line_error(run) -> bool:
    return run.returncode == 2 and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


NOT_A_DATACLASS = '''
from nasbench import Algorithm
class NotDC(Algorithm):
    name = "notdc"
    class Settings:
        epochs = 5
    def ask(self):
        return None
'''

TWINS = '''
from nasbench import Algorithm, Job
class A(Algorithm):
    name = "twin"
    def start(self, inputs):
        self.rows = iter(range(inputs.search.n))
    def ask(self):
        return Job(next(self.rows), 1)
class B(A):
    name = "twin"
'''


def test_plugin_settings_not_a_dataclass_is_one_line(tmp_path):
    (tmp_path / "notdc.py").write_text(NOT_A_DATACLASS)
    run = cli("run", "--algo", f"{tmp_path}/notdc.py:NotDC", "--trials", "1", "--out", str(tmp_path / "out"))
    assert one_line_error(run) and "Settings must be a dataclass" in run.stderr


def test_two_plugins_with_one_name_are_refused_before_anything_runs(tmp_path):
    (tmp_path / "twins.py").write_text(TWINS)
    run = cli("run", "--algo", f"{tmp_path}/twins.py:A,{tmp_path}/twins.py:B", "--trials", "2", "--budget-hours", "1",
              "--out", str(tmp_path / "out"))
    assert one_line_error(run) and "both named 'twin'" in run.stderr
    assert not (tmp_path / "out").exists()


def test_the_lock_file_is_never_followed_through_a_link(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / "out" / "ptb").mkdir(parents=True)
    (tmp_path / "out" / "ptb" / ".nasbench-run.lock").symlink_to(target)
    run = cli("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "1", "--out", str(tmp_path / "out"))
    assert one_line_error(run) and "symbolic link" in run.stderr
    assert target.read_text() == "keep me\n"


def test_the_python_api_takes_the_runs_lock(tmp_path, ptb):
    import nasbench
    from nasbench_cli.harness.run_lock import run_lock

    with run_lock(tmp_path, "ptb"):          # a CLI run writing there (same lock, another open file)
        script = (f"import nasbench\ntry:\n    nasbench.run('rs50e', 'ptb', trials=1, budget_hours=1, out={str(tmp_path)!r})\n"
                  "except nasbench.UserError as e:\n    print('refused:', e)\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert "refused: another `nasbench run`" in run.stdout, run.stdout + run.stderr
    assert len(nasbench.run("rs50e", ptb, trials=1, budget_hours=1, out=tmp_path)) == 1   # free again


@pytest.mark.parametrize("seed", [-1, 1.5, True, 2**32, "3"])
def test_the_python_api_validates_the_seed(ptb, seed):
    import nasbench

    with pytest.raises(UserError, match="integer seed"):
        nasbench.run("rs50e", ptb, trials=1, budget_hours=1, seed=seed)


def _bert_copy(tmp_path, edit=None, raw: bytes | None = None) -> Path:
    source = ROOT.parent / "shared" / "training-free-nas"
    for name in ("BERT_search_space.json", "BERT_results_activation.csv"):
        shutil.copy(source / name, tmp_path / name)
    if raw is None:
        records = json.loads((source / "BERT_benchmark.json").read_text())
        edit(records)
        raw = json.dumps(records).encode()
    (tmp_path / "BERT_benchmark.json").write_bytes(raw)
    return tmp_path


def _set_first(key_path, value):
    def edit(records):
        target = records[0]
        for key in key_path[:-1]:
            target = target[key]
        target[key_path[-1]] = value
    return edit


BAD_RECORDS = {
    "infinite time": (_set_first(["time_to_train"], float("inf")), "time_to_train"),
    "glue as text": (_set_first(["scores", "glue"], "99.5"), "scores.glue"),
    "glue as boolean": (_set_first(["scores", "glue"], True), "scores.glue"),
    "glue 1e308": (_set_first(["scores", "glue"], 1e308), "scores.glue"),
    "glue 150": (_set_first(["scores", "glue"], 150), "scores.glue"),
    "not completed": (_set_first(["completed"], False), "completed"),
    "huge id": (_set_first(["id"], 10**30), "id must be"),
}


@pytest.mark.parametrize("case", list(BAD_RECORDS))
def test_bad_bert_records_are_refused_naming_the_record(tmp_path, case):
    from benchmarks.flexibert.table import load_bert_benchmark

    edit, needle = BAD_RECORDS[case]
    with pytest.raises(DataError, match=f"record 0 .*{needle}"):
        load_bert_benchmark(_bert_copy(tmp_path, edit))


@pytest.mark.parametrize("raw", [b"[]", b"{}", b"[" * 100_000 + b"]" * 100_000, b"[\xff\xfe]"],
                         ids=["empty list", "object", "deep nesting", "not utf-8"])
def test_malformed_bert_files_are_one_line(tmp_path, raw):
    folder = _bert_copy(tmp_path, raw=raw)
    run = cli("data", "info", "--benchmark", "bert", "--data-dir", str(folder))
    assert one_line_error(run), run.stderr[-2000:]
    assert "BERT_benchmark.json" in run.stderr


def test_the_test_suite_never_uses_the_users_cache(tmp_path):
    """conftest forces a private cache even when NASBENCH_CACHE is set (fixture files were written there)."""
    code = ("import os, runpy; os.environ['NASBENCH_CACHE'] = %r; runpy.run_path('tests/conftest.py'); "
            "print(os.environ['NASBENCH_CACHE'])" % str(tmp_path))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() != str(tmp_path)


@pytest.fixture(scope="module")
def three_hb_trials(tmp_path_factory, ptb):
    out = tmp_path_factory.mktemp("hb3")
    run = cli("run", "--algo", "hb", "--trials", "3", "--budget-hours", "50", "--out", str(out))
    assert run.returncode == 0, run.stderr
    return out


def _copy_of(src: Path, dst_root: Path) -> Path:
    shutil.copytree(src, dst_root)
    return dst_root


@pytest.mark.parametrize("command", [["report"], ["export", "--out", "EXPORT"], ["check", "--write-baseline", "BASE"]])
@pytest.mark.parametrize("tamper", ["copied trial", "renamed huge trial", "regrets edited consistently"])
def test_tampered_result_files_are_refused(three_hb_trials, tmp_path, command, tamper):
    """Issue 29: files whose seed does not follow their trial number (a copy counts twice), and regrets
    edited through a whole file, were counted by report, export and write-baseline."""
    root = _copy_of(three_hb_trials, tmp_path / "results")
    folder = root / "ptb" / "hb"
    record = json.loads((folder / "trial-0.json").read_text())
    if tamper == "copied trial":
        record["trial"] = 3
        (folder / "trial-3.json").write_text(json.dumps(record))
    elif tamper == "renamed huge trial":
        record["trial"] = 10**20
        (folder / f"trial-{10**20}.json").write_text(json.dumps(record))
    else:
        traj = record["trajectory"]
        traj["regret"] = [None if r is None else r * 0.75 for r in traj["regret"]]
        record["final_regret"] = traj["regret"][-1]
        (folder / "trial-0.json").write_text(json.dumps(record))
    args = [a.replace("EXPORT", str(tmp_path / "export")).replace("BASE", str(tmp_path / "base.json")) for a in command]
    run = cli(args[0], str(root), *args[1:])
    assert one_line_error(run), run.stdout[-500:] + run.stderr[-2000:]
    assert ("seed" in run.stderr) if tamper != "regrets edited consistently" else ("edited" in run.stderr)
    assert not (tmp_path / "base.json").exists()


FREE_JOBS = '''
from nasbench import Algorithm, Job
class Free(Algorithm):
    name = "free-jobs"
    def ask(self):
        return Job(0, 50)          # after the first, trains nothing and costs nothing, forever
'''


def test_jobs_that_train_nothing_cannot_hang_a_trial(tmp_path):
    """Issue 29: the clock never moved and the worker grew to 10.9 GB; now the trial fails, naming the plugin."""
    from nasbench_cli.harness.simulator import free_job_limit

    (tmp_path / "free.py").write_text(FREE_JOBS)
    run = subprocess.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", f"{tmp_path}/free.py:Free",
                          "--trials", "1", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "free-jobs" in run.stderr and "ProtocolError" in run.stderr and "trained nothing" in run.stderr
    assert f"{free_job_limit(14322) + 1} jobs in a row" in run.stderr
