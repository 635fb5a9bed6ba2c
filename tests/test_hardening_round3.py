"""Hardening, round three (the items that are done): settings checked against the table for every
algorithm before anything runs."""
import subprocess
import sys

from benchmarks.core.paths import REPO_ROOT

import cli_process


def nasbench(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True)


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


HALVES_TIMES = '''
import gc
import numpy as np
from nasbench import Algorithm, Job

class Half(Algorithm):
    """Finds the environment's prefix sums of wall time through gc and halves them for everyone."""
    name = "half"
    def start(self, inputs):
        self.rows = iter(range(inputs.search.n))
        for obj in gc.get_objects():
            if type(obj).__name__ == "_PrefixIndex":
                obj.cum_time_s.flags.writeable = True
                obj.cum_time_s[:] = obj.cum_time_s / 2
    def ask(self):
        return Job(next(self.rows), 1)
'''


import pytest  # noqa: E402


@pytest.mark.parametrize("backend", ["local", "dask"])
def test_a_plugin_cannot_change_the_arrays_other_trials_read(tmp_path, backend):
    """A 10-line plugin switched the WRITEABLE flag of the environment's arrays back on and halved the
    recorded times: hb in the same run then gave 0.0032 after 891 evaluations instead of 0.2492 after 259.
    The arrays now live in memory that cannot be made writable: the plugin's own trial fails in one line,
    and hb's files are those of a run without it."""
    if backend == "dask":
        pytest.importorskip("distributed")
    (tmp_path / "half.py").write_text(HALVES_TIMES)
    extra = ["--backend", "dask", "--scheduler", "local:1"] if backend == "dask" else ["--jobs", "1"]
    common = ["--trials", "2", "--budget-hours", "20", *extra]
    mixed = nasbench("run", "--algo", f"{tmp_path}/half.py:Half,hb", *common, "--out", str(tmp_path / "mixed"))
    assert mixed.returncode == 1 and "cannot set WRITEABLE flag" in mixed.stderr, mixed.stderr[-2000:]
    assert "Traceback" not in mixed.stderr
    plain = nasbench("run", "--algo", "hb", *common, "--out", str(tmp_path / "plain"))
    assert plain.returncode == 0, plain.stderr[-2000:]
    import json

    for k in range(2):
        a = json.loads((tmp_path / "mixed" / "ptb" / "hb" / f"trial-{k}.json").read_text())
        b = json.loads((tmp_path / "plain" / "ptb" / "hb" / f"trial-{k}.json").read_text())
        assert (a["trajectory"], a["jobs"], a["final_regret"]) == (b["trajectory"], b["jobs"], b["final_regret"])


def _tamper(path, key, edit):
    """Rewrite the .npz at `path` with `edit` applied to its array `key`, every other entry kept."""
    import numpy as np

    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files}
    arrays[key] = edit(arrays[key].copy())
    path.chmod(0o644)
    np.savez(path, **arrays)


def test_a_tampered_packed_cache_is_caught_and_rebuilt(tmp_path, wt2):
    """One architecture's test losses set to 4.0 in a copy of the packed cache: `data info --verify` said
    "verified" and a run recorded l_star 4.0 under the clean data's checksum. The cache's arrays are now
    checked against their own sha256 at every load: the edited cache is rebuilt from the logs."""
    import json
    import os
    import shutil

    from benchmarks.cells.packed_cache import array_digest

    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy2(wt2.cache_path, cache / wt2.cache_path.name)
    copy = cache / wt2.cache_path.name
    _tamper(copy, "test_loss", lambda loss: (loss.__setitem__((0, slice(None)), 4.0), loss)[1])
    env = {**os.environ, "NASBENCH_CACHE": str(cache)}
    info = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "data", "info", "--benchmark", "wt2",
                           "--verify", "--json"], capture_output=True, text=True, env=env)
    assert info.returncode == 0, info.stderr
    facts = json.loads(info.stdout)
    assert "unusable" in info.stderr and "test_loss_digest" in info.stderr
    assert facts["verified"] is True and facts["l_star"] == wt2.l_star != 4.0
    assert facts["checksum_sha256"] == wt2.checksum
    import numpy as np

    with np.load(copy) as rebuilt:                      # rebuilt in place from the logs
        assert array_digest({"test_loss": rebuilt["test_loss"]}, ["test_loss"]) == str(rebuilt["test_loss_digest"])
        assert np.array_equal(rebuilt["test_loss"], wt2.test_loss, equal_nan=True)


def test_test_losses_edited_after_the_load_are_refused_at_scoring(tmp_path, wt2):
    import shutil
    from dataclasses import replace

    import pytest

    from benchmarks.core.errors import DataError
    from benchmarks.core.registry import load_test_losses

    copy = tmp_path / wt2.cache_path.name
    shutil.copy2(wt2.cache_path, copy)
    searcher = replace(wt2, test_loss=None, cache_path=copy)
    assert load_test_losses(searcher).l_star == wt2.l_star
    _tamper(copy, "test_loss", lambda loss: (loss.__setitem__((3, 0), 1.0), loss)[1])
    with pytest.raises(DataError, match="do not match their checksum"):
        load_test_losses(searcher)


def test_a_tampered_gpt_cache_is_caught(tmp_path):
    import os
    import shutil

    import numpy as np

    from benchmarks.core.registry import load_benchmark

    packed = load_benchmark("gpt-l").cache_path       # the real data's cache, in this process's cache folder
    cache = tmp_path / "cache"
    cache.mkdir()
    copy = cache / packed.name
    shutil.copy2(packed, copy)
    _tamper(copy, "perplexity", lambda ppl: (ppl.__setitem__(7, 1.5), ppl)[1])
    env = {**os.environ, "NASBENCH_CACHE": str(cache)}
    info = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "data", "info", "--benchmark", "gpt-l",
                           "--verify", "--json"], capture_output=True, text=True, env=env)
    assert info.returncode == 0 and "unusable" in info.stderr, info.stderr
    with np.load(copy) as rebuilt:
        assert rebuilt["perplexity"].min() > 18.0


def test_the_worker_that_starts_an_isolated_algorithm_cannot_be_read_through_proc():
    """An isolated child of the same user read the worker's memory (`/proc/<ppid>/mem`: the validation
    table, regret 0.0032 after 2 evaluations) and environment. The worker now marks itself non-dumpable
    before the child starts, which closes /proc/<pid>/mem, environ, cmdline and fd to processes of the
    same user without CAP_SYS_PTRACE (root keeps it: docs/howto/plugin-contract.md says what to do)."""
    code = (
        "import ctypes, benchmarks\n"
        "from benchmarks.core.registry import load_benchmark\n"
        "from nasbench_cli.harness.isolation import IsolatedAlgorithm\n"
        "from nasbench_cli.harness.trial import run_algorithm\n"
        "from optimizers.registry import make_algorithm\n"
        "libc = ctypes.CDLL(None)\n"
        "before = libc.prctl(3, 0, 0, 0, 0)\n"
        "ptb = load_benchmark('ptb', test_losses=False)\n"
        "env = run_algorithm(ptb.search, IsolatedAlgorithm('rs10e', {}, 'ptb', make_algorithm('rs10e')), 0, 3600.0)\n"
        "print(before, libc.prctl(3, 0, 0, 0, 0), len(env.history.arch))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    before, after, jobs = map(int, result.stdout.split())
    assert (before, after) == (1, 0) and jobs > 0
