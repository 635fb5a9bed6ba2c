"""`NASBENCH_ISOLATE_WRAPPER` (issue 45, item 3): the isolated child started as another user, who can read
neither the worker's /proc entries nor a file kept private; same results as a plain isolated run."""
import json
import os
import shutil
import sys
import textwrap

import pytest

import cli_process

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="starting a child as another user needs root and util-linux setpriv")

PLUGIN = textwrap.dedent('''
    import os
    from optimizers.baselines.random_search import RandomSearch

    class Probe(RandomSearch):
        name = "probe"

        def start(self, inputs):
            checks = {"uid": os.getuid()}
            for what, path in (("parent", f"/proc/{os.getppid()}/environ"), ("secret", os.environ.get("PROBE_SECRET", ""))):
                try:
                    open(path, "rb").read(1)
                    checks[what] = "read"
                except OSError:
                    checks[what] = "refused"
            if checks != {"uid": 65534, "parent": "refused", "secret": "refused"}:
                raise RuntimeError(f"isolation did not hold: {checks}")
            super().start(inputs)
''')


@pytest.fixture
def shared_tmp():
    """A folder the other user can read (pytest's own tmp_path sits under a 0700 folder)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        os.chmod(folder, 0o755)
        yield Path(folder)


def test_the_wrapped_child_runs_as_another_user_and_reads_nothing_private(shared_tmp, data_dir):
    tmp_path = shared_tmp
    plugin = tmp_path / "probe.py"
    plugin.write_text(PLUGIN)
    secret = tmp_path / "secret.txt"
    secret.write_text("the test losses")
    secret.chmod(0o600)
    plugin.chmod(0o644)
    env = {**os.environ, "NASBENCH_DATA": str(data_dir), "PROBE_SECRET": str(secret),
           "NASBENCH_ISOLATE_WRAPPER": "setpriv --reuid=65534 --regid=65534 --clear-groups"}
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", f"{plugin}:Probe", "--trials", "1",
               "--budget-hours", "20", "--isolate", "--json"]
    wrapped = cli_process.run(command + ["--out", str(tmp_path / "a")], capture_output=True, text=True, env=env)
    assert wrapped.returncode == 0, wrapped.stderr
    plain_env = {k: v for k, v in env.items() if k != "NASBENCH_ISOLATE_WRAPPER"}
    plain = cli_process.run(command + ["--out", str(tmp_path / "b")], capture_output=True, text=True, env=plain_env)
    assert plain.returncode == 1 and "isolation did not hold" in plain.stdout     # as root, the probe reads both
    missing = cli_process.run(command + ["--out", str(tmp_path / "c")], capture_output=True, text=True,
                             env={**env, "NASBENCH_ISOLATE_WRAPPER": "no-such-wrapper-command"})
    assert missing.returncode != 0 and "no-such-wrapper-command" in missing.stderr and "Traceback" not in missing.stderr
    record = json.loads(next((tmp_path / "a").rglob("trial-0.json")).read_text())
    assert record["isolated"] is True
