"""The README's Python API example runs as written (extracted from README.md, so the docs cannot rot)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- readme-example:start -->\n```python\n(.*?)```\n<!-- readme-example:end -->", text, re.S)
    assert match, "README.md lost its example block"
    return match.group(1)


def test_the_readme_example_runs_and_does_what_it_says(tmp_path, data_dir):
    pytest.importorskip("pandas")
    script = tmp_path / "example.py"
    script.write_text(readme_example())
    (tmp_path / "optimizers").mkdir()           # a user's own folder of that name changes nothing
    (tmp_path / "optimizers" / "__init__.py").write_text("raise RuntimeError('shadowed')\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "NASBENCH_DATA": str(data_dir)})
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    l_star, best = map(float, lines[0].split())
    assert l_star == pytest.approx(4.3626, abs=1e-4) and best == l_star
    assert "screen3" in run.stdout and "hb" in run.stdout
    assert len(list((tmp_path / "notebook-results" / "ptb" / "screen3").glob("trial-*.json"))) == 10
    assert len(list((tmp_path / "notebook-results" / "ptb" / "hb").glob("trial-*.json"))) == 10
    assert (tmp_path / "notebook-figures" / "ptb-regret-vs-time.png").stat().st_size > 10_000
    # the numbers the README quotes for it
    means = {}
    for line in lines:                          # the first table: mean and std of the final regret
        if line.startswith(("hb ", "screen3 ")):
            means.setdefault(line.split()[0], float(line.split()[1]))
    assert round(means["screen3"], 3) == 0.195 and round(means["hb"], 3) == 0.228
