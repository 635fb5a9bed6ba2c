"""The CI regression gate: the reduced suite of all eight algorithms must not be worse than the
committed baseline (results/baselines/ci-ptb.json, made by scripts/ci_suite.sh from an actual run)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import cli_process


REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / "results" / "baselines" / "ci-ptb.json"


def test_reduced_suite_has_not_regressed(tmp_path, ptb):
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(["bash", str(REPO / "scripts" / "ci_suite.sh"), str(tmp_path)], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(list((tmp_path / "ptb").rglob("trial-*.json"))) == 96
    check = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "check", str(tmp_path), "--baseline",
                            str(BASELINE), "--json"], capture_output=True, text=True)
    print(check.stdout)
    assert check.returncode == 0, check.stdout + check.stderr
    verdict = json.loads(check.stdout)
    assert verdict
