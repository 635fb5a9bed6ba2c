"""NAS-Bench-BERT's published training-free scores against GLUE, on the real files in ../shared."""
import json
import shutil

import pytest
from click.testing import CliRunner

from benchmarks.core.errors import DataError
from benchmarks.proxies.bert_analysis import TASKS, bert_correlations, load_bert_results
from nasbench_cli.commands.analyze_proxies import proxies


def test_the_published_files_load_and_reproduce_the_papers_parameter_tau():
    results = load_bert_results()
    assert len(results.ids) == 500 and len(set(results.ids.tolist())) == 500
    assert set(results.tasks) == set(TASKS) and len(results.metrics) == 15
    table = {row["metric"]: row for row in bert_correlations(results)["metrics"]}
    assert table["Number of Parameters"]["glue"]["tau"] == pytest.approx(0.454, abs=5e-4)   # paper: 0.44
    assert table["Head Confidence"]["glue"]["tau"] == pytest.approx(0.478, abs=5e-4)
    assert table["Number of Parameters"]["tasks"]["rte"]["tau"] < 0.1 < table["Number of Parameters"]["tasks"]["cola"]["tau"]


def test_analyze_proxies_benchmark_bert_prints_and_writes_json():
    text = CliRunner().invoke(proxies, ["--benchmark", "bert"])
    assert text.exit_code == 0 and "Number of Parameters" in text.output and "+0.454" in text.output
    result = CliRunner().invoke(proxies, ["--benchmark", "bert", "--json"])
    data = json.loads(result.output)
    assert data["architectures"] == 500 and data["tasks"]["mnli"]["tau"] > 0.7


def test_a_missing_or_mismatched_file_is_one_line(tmp_path):
    with pytest.raises(DataError, match="not found"):
        load_bert_results(tmp_path)
    from benchmarks.proxies.analysis import published_dir

    for name in ("BERT_results_activation.csv", "BERT_benchmark.json"):
        shutil.copy(published_dir() / name, tmp_path / name)
    entries = json.loads((tmp_path / "BERT_benchmark.json").read_text())
    entries[0]["scores"]["glue"] += 1.0
    (tmp_path / "BERT_benchmark.json").write_text(json.dumps(entries))
    with pytest.raises(DataError, match="disagree"):
        load_bert_results(tmp_path)
