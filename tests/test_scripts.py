"""Every script under scripts/ parses its options: `--help` prints a usage and writes nothing, neither in
the working directory nor in the repository (a script once took `--help` as its output folder and wrote
92 MB of re-packed logs into a folder of that name)."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (REPO / "scripts").iterdir() if p.suffix in (".py", ".sh"))


def _tree(folder: Path) -> set[str]:
    """Names at the top of `folder` and of its scripts/ folder (where a script could write by mistake)."""
    names = {p.name for p in folder.iterdir()}
    if (folder / "scripts").is_dir():
        names |= {f"scripts/{p.name}" for p in (folder / "scripts").iterdir() if p.name != "__pycache__"}
    return names


def test_every_script_is_checked():
    assert len(SCRIPTS) >= 20 and {"heldout_folders.py", "synetune_random_search.py", "ci_suite.sh"} <= \
        {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_prints_a_usage_and_writes_nothing(script, tmp_path):
    before = _tree(REPO)
    command = ["bash", str(script)] if script.suffix == ".sh" else [sys.executable, str(script)]
    result = subprocess.run([*command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage" in result.stdout.lower()
    assert list(tmp_path.iterdir()) == [], f"{script.name} --help wrote into the working directory"
    assert _tree(REPO) == before, f"{script.name} --help wrote into the repository"
