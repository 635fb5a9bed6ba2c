"""Hardening, round two (issue 29): each case below was seen silently wrong, losing data or as a traceback."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.core.errors import DataError, UserError

import cli_process

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
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


HAND_EDITS = {
    "algorithm_source is a string": lambda r: r.__setitem__("algorithm_source", "x"),
    "simulated_time_s is a string": lambda r: r.__setitem__("simulated_time_s", "x"),
    "arch ids are strings": lambda r: r["trajectory"].__setitem__("arch", [str(a) for a in r["trajectory"]["arch"]]),
    "epochs are huge floats": lambda r: r["trajectory"].__setitem__("epochs", [1e308] * len(r["trajectory"]["epochs"])),
    "incumbent_epoch overflows": lambda r: r["trajectory"].__setitem__(
        "incumbent_epoch", [10**30] * len(r["trajectory"]["incumbent_epoch"])),
    "worker numbers are strings": lambda r: r["jobs"].__setitem__("worker", ["0"] * len(r["jobs"]["worker"])),
    "overhead_s are strings": lambda r: r["jobs"].__setitem__("overhead_s", ["1"] * len(r["jobs"]["overhead_s"])),
    "seed is null": lambda r: r.__setitem__("seed", None),
    "l_star is a list": lambda r: r.__setitem__("l_star", []),
}


@pytest.mark.parametrize("command", [["report"], ["export", "--out", "EXPORT"]])
@pytest.mark.parametrize("edit", list(HAND_EDITS))
def test_hand_edited_field_types_are_one_line_everywhere(three_hb_trials, tmp_path, command, edit):
    """Issue 29 item 12: `report` accepted files whose field types `export` then choked on (pyarrow and
    int64 casting tracebacks), and some edits (seed null, l_star a list) were tracebacks in both."""
    root = _copy_of(three_hb_trials, tmp_path / "results")
    path = root / "ptb" / "hb" / "trial-1.json"
    record = json.loads(path.read_text())
    HAND_EDITS[edit](record)
    path.write_text(json.dumps(record))
    args = [a.replace("EXPORT", str(tmp_path / "export")) for a in command]
    run = cli(args[0], str(root), *args[1:])
    assert one_line_error(run), run.stdout[-500:] + run.stderr[-2000:]
    assert "trial-1.json" in run.stderr
    assert not (tmp_path / "export").exists()


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
    run = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", f"{tmp_path}/free.py:Free",
                          "--trials", "1", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "free-jobs" in run.stderr and "ProtocolError" in run.stderr and "trained nothing" in run.stderr
    assert f"{free_job_limit(14322) + 1} jobs in a row" in run.stderr


POISON = '''
import numpy as np
from nasbench import Algorithm, Job
class Poison(Algorithm):
    name = "poison"
    def start(self, inputs):
        inputs.search.num_params[:] = 0          # tries to change what later trials in this process see
    def ask(self):
        return Job(0, 1)
'''


def test_what_a_searcher_is_handed_is_read_only(tmp_path):
    """Issue 29: a plugin writing into `inputs.search` changed later hb trials in the same worker (0.2535 ->
    0.2704, exit 0). Now the write fails the plugin's own trial, naming it; hb's results are unchanged."""
    (tmp_path / "poison.py").write_text(POISON)
    common = ["--trials", "2", "--budget-hours", "50", "--jobs", "1"]
    clean = cli("run", "--algo", "hb", *common, "--out", str(tmp_path / "clean"))
    mixed = cli("run", "--algo", f"{tmp_path}/poison.py:Poison,hb", *common, "--out", str(tmp_path / "mixed"))
    assert clean.returncode == 0, clean.stderr
    assert mixed.returncode == 1 and "Traceback" not in mixed.stderr
    assert "poison" in mixed.stderr and "read-only" in mixed.stderr
    for seed in (0, 1):
        a = json.loads((tmp_path / "clean" / "ptb" / "hb" / f"trial-{seed}.json").read_text())
        b = json.loads((tmp_path / "mixed" / "ptb" / "hb" / f"trial-{seed}.json").read_text())
        assert a["trajectory"] == b["trajectory"] and a["final_regret"] == b["final_regret"]
    assert not list((tmp_path / "mixed" / "ptb").glob("poison/trial-*.json"))


def test_scores_and_features_handed_to_a_searcher_are_read_only():
    from nasbench_cli.harness.simulator import read_only
    import numpy as np

    mine = np.arange(5.0)
    view = read_only(mine)
    with pytest.raises(ValueError):
        view[0] = 9.0
    assert mine[0] == 0.0 and read_only(None) is None


HELPED = '''
from nasbench import Algorithm, Job
from plan_helper import EPOCHS
class Helped(Algorithm):
    name = "helped"
    def start(self, inputs):
        self.rows = iter(range(inputs.search.n))
    def ask(self):
        return Job(next(self.rows), EPOCHS)
'''


def test_resume_refuses_a_plugin_whose_helper_module_changed(tmp_path):
    """Issue 29: only the class's own file was hashed; a helper going from 1 epoch to 50 resumed silently."""
    (tmp_path / "helped.py").write_text(HELPED)
    (tmp_path / "plan_helper.py").write_text("EPOCHS = 1\n")
    args = ("run", "--algo", f"{tmp_path}/helped.py:Helped", "--trials", "1", "--budget-hours", "2",
            "--out", str(tmp_path / "out"))
    first = cli(*args, "--trials", "1")
    assert first.returncode == 0, first.stderr
    record = json.loads((tmp_path / "out" / "ptb" / "helped" / "trial-0.json").read_text())
    assert set(record["algorithm_source"]["sources"]) == {"helped.py", "plan_helper.py"}
    (tmp_path / "plan_helper.py").write_text("EPOCHS = 50\n")
    again = cli(*args[:-4], "--trials", "2", "--budget-hours", "2", "--out", str(tmp_path / "out"))
    assert one_line_error(again) and "plan_helper.py changed" in again.stderr, again.stderr


def test_one_file_named_as_module_or_as_file_is_the_same_code(tmp_path):
    (tmp_path / "helped.py").write_text(HELPED)
    (tmp_path / "plan_helper.py").write_text("EPOCHS = 1\n")
    out = str(tmp_path / "out")
    common = ("--trials", "1", "--budget-hours", "2", "--out", out, "--label", "h")
    as_file = cli("run", "--algo", f"{tmp_path}/helped.py:Helped", *common)
    as_module = cli("run", "--algo", "helped:Helped", *common, cwd=tmp_path)
    assert as_file.returncode == 0 and as_module.returncode == 0, as_file.stderr + as_module.stderr
    assert "0 to run" in as_module.stdout + as_module.stderr or "already" in as_module.stdout + as_module.stderr


def test_a_class_whose_source_cannot_be_read_is_never_resumed(tmp_path, ptb):
    script = ("import nasbench\nfrom nasbench import Algorithm, Job\n"
              "class Typed(Algorithm):\n    name = 'typed'\n"
              "    def ask(self):\n        return Job(0, 1) if not hasattr(self, 'x') else None\n"
              "    def tell(self, job, obs):\n        self.x = 1\n"
              f"for _ in range(2):\n    try:\n        nasbench.run(Typed, 'ptb', trials=1, budget_hours=1, out={str(tmp_path)!r})\n"
              "        print('ran')\n    except nasbench.UserError as e:\n        print('refused:', e)\n")
    run = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, cwd=ROOT)
    assert run.stdout.splitlines()[0] == "ran", run.stdout + run.stderr
    assert "source cannot be read" in run.stdout.splitlines()[1], run.stdout


EXITS = '''
import os
from nasbench import Algorithm, Job
class Exit0(Algorithm):
    name = "exit0"
    def ask(self):
        raise SystemExit(0)
class Hard(Algorithm):
    name = "hard"
    def ask(self):
        os._exit(3)
class Intr(Algorithm):
    name = "intr"
    def ask(self):
        raise KeyboardInterrupt
'''


@pytest.mark.parametrize("plugin, says", [
    ("Exit0", "the algorithm called sys.exit(0)"),
    ("Hard", "its worker process died while running it (exit code 3)"),
    ("Intr", "KeyboardInterrupt raised by the algorithm's code, not a Ctrl-C"),
])
def test_a_plugin_that_exits_ends_only_its_own_trials(tmp_path, plugin, says):
    """Issue 29: sys.exit() in a plugin ended the whole run with 0/6 trials and exit 0; os._exit gave an
    unnamed TerminatedWorkerError; a plugin's KeyboardInterrupt was reported as the user's Ctrl-C."""
    (tmp_path / "bad.py").write_text(EXITS)
    run = cli("run", "--algo", f"{tmp_path}/bad.py:{plugin},rs50e", "--trials", "3", "--budget-hours", "20",
              "--jobs", "2", "--out", str(tmp_path / "out"))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 3 and all(plugin.lower() in line and says in line for line in lines), run.stderr
    assert len(list((tmp_path / "out" / "ptb" / "rs50e").glob("trial-*.json"))) == 3


def test_a_plugin_calling_sys_exit_at_import_is_one_line(tmp_path):
    (tmp_path / "atimport.py").write_text("import sys\nsys.exit(0)\n")
    run = cli("run", "--algo", f"{tmp_path}/atimport.py:X,rs50e", "--trials", "1", "--out", str(tmp_path / "out"))
    assert one_line_error(run) and "called sys.exit(0) while being imported" in run.stderr


@pytest.mark.parametrize("args, says", [
    (("run", "--algo", "hb", "--set", "hb.eta=99999999999999999999999", "--trials", "1"), "expects a 64-bit integer"),
    (("run", "--algo", "rs50e", "--backend", "dask", "--scheduler", "foo://x", "--trials", "1"), "unknown protocol 'foo://'"),
])
def test_more_bad_input_is_one_line(tmp_path, args, says):
    run = cli(*args, "--out", str(tmp_path / "out"))
    assert one_line_error(run) and says in run.stderr, run.stderr[-2000:]


NAN_SETTING = '''
from dataclasses import dataclass
from nasbench import Algorithm
class NanSet(Algorithm):
    name = "nanset"
    @dataclass(frozen=True)
    class Settings:
        temperature: float = float("nan")
    def ask(self):
        return None
'''


def test_a_setting_no_result_file_can_hold_is_one_line(tmp_path):
    """Issue 29: a plugin setting defaulting to NaN ended, after computing, in 'Out of range float values
    are not JSON compliant'."""
    (tmp_path / "nanset.py").write_text(NAN_SETTING)
    run = cli("run", "--algo", f"{tmp_path}/nanset.py:NanSet", "--trials", "1", "--out", str(tmp_path / "out"))
    assert one_line_error(run) and "settings must be finite numbers" in run.stderr
    script = (f"import sys, nasbench\nsys.path.insert(0, {str(tmp_path)!r})\nfrom nanset import NanSet\n"
              "try:\n    nasbench.run(NanSet(), 'ptb', trials=1, budget_hours=1)\n"
              "except nasbench.UserError as e:\n    print('refused:', e)\n")
    api = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert "refused: setting nanset.temperature is nan" in api.stdout, api.stdout + api.stderr


def test_a_baseline_whose_budget_is_a_string_is_one_line(three_hb_trials, tmp_path):
    base = tmp_path / "base.json"
    assert cli("check", str(three_hb_trials), "--write-baseline", str(base)).returncode == 0
    data = json.loads(base.read_text())
    for bench in data["benchmarks"].values():
        for entry in bench["algorithms"].values():
            entry["budget_s"] = str(entry["budget_s"])
    base.write_text(json.dumps(data))
    run = cli("check", str(three_hb_trials), "--baseline", str(base), "--allow-underpowered")
    assert one_line_error(run) and "budget_s" in run.stderr, run.stderr[-1500:]


def _interrupt_group(args, after_s: float):
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "nasbench_cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after_s)
    os.killpg(proc.pid, signal.SIGINT)       # as a terminal's Ctrl-C: every process of the group
    out, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_ctrl_c_to_the_process_group_prints_no_worker_traceback(tmp_path):
    """Issue 29 (and 28): Ctrl-C from a terminal printed loky's `ExecutorManagerThread ... KeyError`."""
    code, err = _interrupt_group(["run", "--algo", "bo10d", "--trials", "6", "--jobs", "2", "--out", str(tmp_path)], 6)
    assert code == 130 and "Traceback" not in err and "interrupted:" in err, err[-3000:]


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_on_dask_prints_no_worker_traceback(tmp_path):
    code, err = _interrupt_group(["run", "--algo", "bo10d", "--trials", "4", "--backend", "dask", "--scheduler",
                                  "local:2", "--out", str(tmp_path)], 14)
    assert code == 130 and "Traceback" not in err and "interrupted:" in err, err[-3000:]


PEEK = '''
import numpy as np
from nasbench import Algorithm, Job
class Peek(Algorithm):
    name = "peek"
    def start(self, inputs):
        self.best = int(np.nanargmin(inputs.search.val_loss[:, -1]))   # every row's curve: not handed any more
    def ask(self):
        return Job(self.best, 50)
'''


def test_a_searcher_is_handed_no_curves(tmp_path, ptb):
    """Issue 29: `inputs.search.val_loss` was the full 14,322 x 50 matrix; a 20-line plugin picking the best
    row by validation reached the optimum in every trial. Losses and times now arrive only in observations."""
    view = ptb.search.searcher_view
    for hidden in ("val_loss", "train_loss", "wall_time_s", "n_epochs", "status", "test_loss", "log_names"):
        assert not hasattr(view, hidden), hidden
    assert view.n == ptb.search.n and view.max_epochs == 50 and view.recipes == ptb.search.recipes
    assert not view.ids.flags.writeable and not view.num_params.flags.writeable
    (tmp_path / "peek.py").write_text(PEEK)
    run = cli("run", "--algo", f"{tmp_path}/peek.py:Peek", "--trials", "1", "--budget-hours", "5",
              "--out", str(tmp_path / "out"))
    assert run.returncode == 1 and "AttributeError" in run.stderr and "val_loss" in run.stderr, run.stderr


FRAMES = '''
import gc, sys
import numpy as np
from nasbench import Algorithm, Job

def holds_test_losses(obj):
    # by the values' types: an object answering any attribute (Dask's RPC and delayed proxies) holds none
    if isinstance(obj, type):
        return False
    try:
        return isinstance(getattr(obj, "test_loss", None), np.ndarray) or isinstance(getattr(obj, "l_star", None), float) \
            or isinstance(getattr(obj, "front_rows", None), np.ndarray)
    except Exception:
        return False

class Frames(Algorithm):
    name = "frames"
    def start(self, inputs):
        self.rows = iter(range(inputs.search.n))
        self.look("start")
    def look(self, when):
        frame, found = sys._getframe(), []
        while frame is not None:
            found += [k for k, v in frame.f_locals.items() if holds_test_losses(v)]
            frame = frame.f_back
        found += [type(o).__name__ for o in gc.get_objects() if holds_test_losses(o)]
        if found:
            raise RuntimeError(f"test losses reachable at {when}: {sorted(set(found))}")
    def ask(self):
        return Job(next(self.rows), 1)
    def tell(self, job, observation):
        self.look("tell")
'''


@pytest.mark.parametrize("problem", [(), ("--constraint", "params<=6e6"), ("--objectives", "logppl,params")],
                         ids=["single", "constrained", "multi-objective"])
@pytest.mark.parametrize("backend", ["local", pytest.param("dask", marks=pytest.mark.slow)])
def test_no_test_loss_is_reachable_while_an_algorithm_runs(tmp_path, backend, problem):
    """Issue 29: `sys._getframe(...).f_locals['benchmark'].test_loss` reached regret 0.0032 after one job.
    Now the process running an algorithm loads no test losses; the trial reads them after it finished.
    Round 3: nor any true front or feasible optimum (the per-process cache of objective spaces held them
    from the second trial of a worker on), for constrained and multi-objective runs: three trials of each
    algorithm in one worker process."""
    (tmp_path / "frames.py").write_text(FRAMES)
    extra = ["--backend", "dask", "--scheduler", "local:1"] if backend == "dask" else ["--jobs", "1"]
    run = cli("run", "--algo", f"{tmp_path}/frames.py:Frames,hb", "--trials", "3", "--budget-hours", "1",
              "--out", str(tmp_path / "out"), *problem, *extra)
    assert run.returncode == 0, run.stderr[-2000:]
    for k in range(3):
        record = json.loads((tmp_path / "out" / "ptb" / "frames" / f"trial-{k}.json").read_text())
        assert record["l_star"] > 4.0 and len(record["trajectory"]["arch"]) > 10    # each job looked at every object


CURVES = '''
import gc, sys
import numpy as np
from nasbench import Algorithm, Job

def holds_curves(obj):
    if isinstance(obj, type):
        return False
    try:
        return isinstance(getattr(obj, "val_loss", None), np.ndarray)
    except Exception:
        return False

class Curves(Algorithm):
    name = "curves"
    def start(self, inputs):
        self.rows = iter(range(inputs.search.n))
        frame, found = sys._getframe(), []
        while frame is not None:
            found += [k for k, v in frame.f_locals.items() if holds_curves(v)]
            frame = frame.f_back
        found += [type(o).__name__ for o in gc.get_objects() if holds_curves(o)]
        if found:
            raise RuntimeError(f"recorded curves reachable: {sorted(set(found))}")
    def ask(self):
        return Job(next(self.rows), 1)
'''


def test_isolate_leaves_no_curve_within_reach_and_changes_no_result(tmp_path):
    """Issue 29: in-process code reaches the harness's table of curves through frames; `--isolate` runs
    the algorithm in its own process, and gives the same trajectories."""
    (tmp_path / "curves.py").write_text(CURVES)
    common = ["--trials", "1", "--budget-hours", "30", "--jobs", "1"]
    inside = cli("run", "--algo", f"{tmp_path}/curves.py:Curves", *common, "--out", str(tmp_path / "in"))
    assert inside.returncode == 1 and "recorded curves reachable" in inside.stderr
    isolated = cli("run", "--algo", f"{tmp_path}/curves.py:Curves,hb", *common, "--isolate", "--out", str(tmp_path / "iso"))
    plain = cli("run", "--algo", "hb", *common, "--out", str(tmp_path / "plain"))
    assert isolated.returncode == 0 and plain.returncode == 0, isolated.stderr[-2000:]
    a = json.loads((tmp_path / "iso" / "ptb" / "hb" / "trial-0.json").read_text())
    b = json.loads((tmp_path / "plain" / "ptb" / "hb" / "trial-0.json").read_text())
    assert a["isolated"] is True and "isolated" not in b
    assert (a["trajectory"], a["jobs"], a["settings_hash"]) == (b["trajectory"], b["jobs"], b["settings_hash"])
    report = cli("report", str(tmp_path / "iso"))
    assert "isolated" in report.stdout + report.stderr


def test_an_isolated_plugin_that_fails_is_one_line(tmp_path):
    (tmp_path / "bad.py").write_text(EXITS)
    run = cli("run", "--algo", f"{tmp_path}/bad.py:Hard,{tmp_path}/bad.py:Exit0", "--trials", "1", "--isolate",
              "--out", str(tmp_path / "out"))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "hard trial 0: its isolated process ended during ask() (exit code 3)" in run.stderr
    assert "exit0 trial 0: the algorithm called sys.exit(0)" in run.stderr


def test_check_can_require_isolated_plugins(tmp_path):
    (tmp_path / "helped.py").write_text(HELPED)
    (tmp_path / "plan_helper.py").write_text("EPOCHS = 1\n")
    common = ("--algo", f"{tmp_path}/helped.py:Helped", "--trials", "2", "--budget-hours", "2")
    assert cli("run", *common, "--out", str(tmp_path / "loose")).returncode == 0
    assert cli("run", *common, "--isolate", "--out", str(tmp_path / "iso")).returncode == 0
    base = tmp_path / "base.json"
    assert cli("check", str(tmp_path / "iso"), "--write-baseline", str(base)).returncode == 0
    loose = cli("check", str(tmp_path / "loose"), "--baseline", str(base), "--require-isolated", "--allow-underpowered")
    assert one_line_error(loose) and "did not run isolated" in loose.stderr
    fine = cli("check", str(tmp_path / "iso"), "--baseline", str(base), "--require-isolated", "--allow-underpowered")
    assert fine.returncode == 0, fine.stderr


def test_a_trial_that_used_the_whole_table_up_says_when(tmp_path, wt2):
    """Issue 29: asha on wt2 starts every cell long before its budget ends, then idles; run and report say so."""
    run = cli("run", "--algo", "asha", "--benchmark", "wt2", "--trials", "2", "--out", str(tmp_path))
    assert run.returncode == 0 and "trials started every architecture of the table" in run.stdout
    record = json.loads((tmp_path / "wt2" / "asha" / "trial-0.json").read_text())
    starts = record["jobs"]["start_s"]
    first_start = {}
    for arch, start in zip(record["trajectory"]["arch"], starts):
        first_start.setdefault(arch, start)
    assert len(first_start) == wt2.search.n and record["table_used_up_s"] == max(first_start.values())
    assert record["table_used_up_s"] < record["budget_s"]
    report = cli("report", str(tmp_path))
    assert "wt2/asha: 2 of 2 trials started every architecture" in " ".join(report.stdout.split())
