"""Commands that agree with each other and with the docs (issue: commands that agree): one line for a
bad option value, the run summary counting trials without an incumbent as `report` does, the Python
API's namespace and its "did you mean", and the command line describing every benchmark."""
import subprocess
import sys

import pytest


def nasbench(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          **kwargs)


def test_a_misspelt_benchmark_is_one_line_with_a_suggestion():
    result = nasbench("run", "--algo", "hb", "--benchmark", "ptbb")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "did you mean" in lines[0] and "ptb" in lines[0]
    missing = nasbench("run")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "--algo" in missing.stderr and "nasbench run --help" in missing.stderr


def test_the_run_summary_counts_trials_without_a_feasible_architecture_as_report_does(tmp_path):
    """hb under a tight parameter budget finds nothing feasible in some trials: the summary line says so."""
    out = tmp_path / "r"
    result = nasbench("run", "--algo", "hb", "--trials", "3", "--budget-hours", "30", "--constraint", "params<=6e6",
                      "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = nasbench("report", str(out), "--json")
    import json

    row = json.loads(report.stdout)["benchmarks"]["ptb"]["algorithms"]["hb"]
    assert 0 < row["no_incumbent"] < 3          # the case: some trials found none, some did
    line = next(line for line in result.stdout.splitlines() if line.startswith("hb "))
    assert f"3 trials ({row['no_incumbent']} none)" in line, line


def test_the_api_namespace_holds_only_the_api():
    import nasbench

    public = {name for name in dir(nasbench) if not name.startswith("_")}
    assert public == set(nasbench.__all__) - {"__version__"}
    assert {"Path", "importlib", "sys"}.isdisjoint(public)


def test_the_api_suggests_a_name_for_a_misspelt_algorithm():
    import nasbench
    from benchmarks.core.errors import UserError

    with pytest.raises(UserError, match="did you mean.*hb"):
        nasbench.run("hbb", "ptb", trials=1, budget_hours=1)


def test_the_command_line_describes_every_benchmark():
    from benchmarks.core.catalog import BENCHMARKS

    top = nasbench("--help").stdout
    data = nasbench("data", "--help").stdout
    for name in BENCHMARKS:
        assert name in top.replace("gpt-s, gpt-m, gpt-l", "gpt-s gpt-m gpt-l"), name
    assert "NAS-Bench-NLP data" not in data and "gpt" in data
