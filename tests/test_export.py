"""Variants side by side and results as data: two labelled hb variants in one report and one plot
(from two results folders), `report --at`, `export` to parquet/csv with the documented columns, the
Python API's `run` (files, resume, refusal), and format-1 result files still read."""
import importlib.util
import json

import pytest
from click.testing import CliRunner

from benchmarks.core.errors import UserError

from nasbench_cli.results.export import GRID_COLUMNS, JOB_COLUMNS, TRIAL_COLUMNS
from nasbench_cli.main import group as cli

# found, not imported: importing them at collection would cost every test process a second
pytestmark = pytest.mark.skipif(importlib.util.find_spec("pandas") is None or importlib.util.find_spec("pyarrow") is None,
                                reason="pandas and pyarrow not installed")


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def two_folders(tmp_path_factory, data_dir):
    root = tmp_path_factory.mktemp("variants")
    a, b = root / "results", root / "variants"
    for out, extra in ((a, []), (b, ["--set", "eta=4", "--label", "hb-eta4"])):
        result = invoke("run", "--algo", "hb", "--trials", 4, "--budget-hours", 60, "--jobs", 1, "--out", out,
                        "--data-dir", data_dir, *extra)
        assert result.exit_code == 0, result.output
    return a, b


def test_two_labelled_variants_in_one_report_and_one_plot(two_folders, tmp_path):
    a, b = two_folders
    report = invoke("report", a, b, "--json")
    assert report.exit_code == 0, report.output
    rows = json.loads(report.output)["benchmarks"]["ptb"]["algorithms"]
    assert set(rows) == {"hb", "hb-eta4"} and rows["hb"]["trials"] == 4
    assert rows["hb"]["mean_final_regret"] != rows["hb-eta4"]["mean_final_regret"]
    plot = invoke("plot", a, b, "--out", tmp_path / "fig", "--format", "png", "--json")
    assert plot.exit_code == 0, plot.output
    assert len(json.loads(plot.output)["files"]) == 3
    same = invoke("report", a, a)
    assert isinstance(same.exception, UserError)             # exit 2, one line, through `nasbench`
    assert "is in both" in str(same.exception) and "--label" in str(same.exception)


def test_report_at_earlier_times_cuts_every_trial_there(two_folders):
    a, _ = two_folders
    result = invoke("report", a, "--at", "5h,30", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    final = data["benchmarks"]["ptb"]["algorithms"]["hb"]
    early = data["at"]["5h"]["benchmarks"]["ptb"]["algorithms"]["hb"]
    middle = data["at"]["30h"]["benchmarks"]["ptb"]["algorithms"]["hb"]
    assert early["mean_final_regret"] >= middle["mean_final_regret"] >= final["mean_final_regret"]
    trials = [json.loads(p.read_text()) for p in sorted((a / "ptb" / "hb").glob("trial-*.json"))]
    expected = []
    for record in trials:                         # the regret of the last job that ended by 30 h
        t = record["trajectory"]
        ended = [r for time, r in zip(t["time_s"], t["regret"]) if time <= 30 * 3600]
        expected.append(ended[-1])
    assert middle["mean_final_regret"] == pytest.approx(sum(expected) / len(expected))
    for bad in ("-3h", "0", "soon", "10h,,20h"):
        result = invoke("report", a, "--at", bad)
        assert isinstance(result.exception, UserError) and "--at expects positive hours" in str(result.exception)


def test_export_writes_the_documented_tables(two_folders, tmp_path):
    import pandas

    a, b = two_folders
    result = invoke("export", a, b, "--out", tmp_path / "ex", "--json")
    assert result.exit_code == 0, result.output
    jobs = pandas.read_parquet(tmp_path / "ex" / "regret.parquet")
    trials = pandas.read_parquet(tmp_path / "ex" / "trials.parquet")
    assert list(jobs.columns) == list(JOB_COLUMNS) and list(trials.columns) == list(TRIAL_COLUMNS)
    assert set(trials["label"]) == {"hb", "hb-eta4"} and len(trials) == 8
    record = json.loads((a / "ptb" / "hb" / "trial-2.json").read_text())
    mine = jobs[(jobs.label == "hb") & (jobs.trial == 2)].sort_values("job")
    assert mine["time_s"].tolist() == record["trajectory"]["time_s"]
    assert mine["arch"].tolist() == record["trajectory"]["arch"]
    assert trials.set_index(["label", "trial"]).loc[("hb", 2), "final_regret"] == record["final_regret"]
    result = invoke("export", a, "--at", "10h,60h", "--format", "csv", "--out", tmp_path / "grid")
    assert result.exit_code == 0, result.output
    grid = pandas.read_csv(tmp_path / "grid" / "regret.csv")
    assert list(grid.columns) == list(GRID_COLUMNS) and len(grid) == 4 * 2
    at_end = grid[grid.time_h == 60].set_index("trial")["regret"]
    assert at_end.loc[2] == pytest.approx(record["final_regret"])


def test_api_run_writes_files_resumes_and_refuses_other_settings(tmp_path, ptb):
    import nasbench

    records = nasbench.run("rs10e", ptb, trials=2, budget_hours=5, out=tmp_path)
    path = tmp_path / "ptb" / "rs10e" / "trial-1.json"
    assert json.loads(path.read_text()) == json.loads(json.dumps(records[1]))
    again = nasbench.run("rs10e", ptb, trials=2, budget_hours=5, out=tmp_path)
    assert again[1]["compute_s"] == records[1]["compute_s"]          # read back, not rerun
    with pytest.raises(nasbench.UserError, match="other settings"):
        nasbench.run(nasbench.make_algorithm("rs10e", epochs=3), ptb, trials=2, budget_hours=5, out=tmp_path)


def test_format_1_files_are_read_with_the_benchmark_best_arch_renamed(two_folders, tmp_path):
    from nasbench_cli.results.files import load_trial

    a, _ = two_folders
    record = json.loads((a / "ptb" / "hb" / "trial-0.json").read_text())
    assert record["format"] == "nasbench-trial/2" and record["benchmark_best_arch"] == 1000001
    old = {k: v for k, v in record.items() if k not in ("benchmark_best_arch", "algorithm_source")}
    old.update(format="nasbench-trial/1", best_arch=1000001)
    (tmp_path / "trial-0.json").write_text(json.dumps(old))
    loaded = load_trial(tmp_path / "trial-0.json")
    assert loaded["benchmark_best_arch"] == 1000001 and "best_arch" not in loaded
