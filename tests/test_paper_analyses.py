"""The paper's analyses on the real NAS-Bench-NLP data: Table 2's numbers and the Fig. 5 rank agreements,
and the commands that print them and draw Figs. 4-6."""
import json

import pytest

from test_run_processes import nasbench


def test_table2_reproduces_the_papers_perplexities(ptb):
    from benchmarks.cells.paper_analyses import table2

    report = table2(ptb, top=3)
    for name, paper in (("lstm", 78.5), ("gru", 86.1), ("rnn", 135.1)):
        assert round(report["baselines"][name]["test_perplexity"], 1) == paper
    assert report["baselines"]["lstm"] == {"id": 1000001, "test_perplexity": pytest.approx(78.4639, abs=1e-4),
                                           "num_params": 10896400, "paper_test_perplexity": 78.5}
    assert report["generated_cells"] == 11595
    assert report["generated_beating"] == {"lstm": 0, "gru": 1, "rnn": 6352}
    assert [r["id"] for r in report["top_generated"]] == [1011537, 2005155, 2005762]
    assert report["top_generated"][0]["test_perplexity"] == pytest.approx(84.724, abs=1e-3)


def test_fidelity_taus_rise_with_epochs(ptb):
    from benchmarks.cells.paper_analyses import fidelity

    report = fidelity(ptb)
    assert report["architectures"] == 11598
    taus = {e: v["kendall_tau"] for e, v in report["epochs"].items()}
    assert taus == pytest.approx({1: 0.4622, 3: 0.6188, 5: 0.6956, 10: 0.7956, 25: 0.9164, 50: 0.9618}, abs=1e-4)
    rhos = [v["spearman_rho"] for v in report["epochs"].values()]
    assert rhos == sorted(rhos) and rhos[-1] > 0.99


def test_metrics_and_transfer_numbers(ptb, wt2):
    from benchmarks.cells.paper_analyses import metrics, transfer

    report = metrics(ptb)
    correlations = report["correlations"]
    assert abs(correlations["num_params vs best_test_perplexity"]["spearman_rho"]) < 0.1   # "no clear correlation"
    assert abs(correlations["wall_time_s vs best_test_perplexity"]["spearman_rho"]) < 0.1
    assert correlations["num_params vs wall_time_s"]["spearman_rho"] == pytest.approx(0.9206, abs=1e-4)
    moved = transfer(ptb, wt2)
    assert moved["architectures"] == 106 and moved["pearson_r"] == pytest.approx(0.938, abs=1e-3)


def test_commands_print_tables_json_and_figures(tmp_path, ptb):
    table = nasbench("analyze", "table2", "--top", "2")
    assert table.returncode == 0 and "78.5" in table.stdout and "1 beat the GRU" in table.stdout
    result = nasbench("analyze", "fidelity", "--epochs", "1,10", "--out", str(tmp_path), "--format", "png,pdf",
                      "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["epochs"]) == ["1", "10"] and report["epochs"]["1"]["kendall_tau"] == pytest.approx(0.4622,
                                                                                                         abs=1e-4)
    assert sorted(report["figures"]) == [str(tmp_path / "ptb-fidelity.pdf"), str(tmp_path / "ptb-fidelity.png")]


def test_figures_of_metrics_and_transfer(tmp_path, ptb, wt2):
    from benchmarks.cells.paper_analyses import metrics, transfer
    from nasbench_cli.figures.paper import metrics_figure, transfer_figure

    written = metrics_figure(ptb, metrics(ptb), tmp_path, ["png", "pdf"]) + \
        transfer_figure(transfer(ptb, wt2), tmp_path, ["png"])
    assert [p.name for p in written] == ["ptb-metrics.png", "ptb-metrics.pdf", "ptb-wt2-transfer.png"]
    assert all(p.stat().st_size > 10_000 for p in written)
    bad = nasbench("analyze", "fidelity", "--epochs", "0,51")
    assert bad.returncode == 2 and "between 1 and 50" in bad.stderr and "Traceback" not in bad.stderr


def test_ged_of_a_cell_to_itself_is_zero_and_lstm_to_rnn_is_positive(ptb):
    from benchmarks.cells.baseline_cells import baseline_id
    from benchmarks.cells.graph_edit_distance import ged_upper_bound

    lstm = ptb.search.recipe(ptb.search.index_of(baseline_id("lstm")))
    rnn = ptb.search.recipe(ptb.search.index_of(baseline_id("rnn")))
    assert ged_upper_bound(lstm, lstm, 5.0) == (0.0, True)
    bound, _ = ged_upper_bound(lstm, rnn, 2.0)
    assert bound >= len(lstm) - len(rnn)       # at least the node count difference


def test_sparsity_is_seeded_and_cached(tmp_path, ptb):
    args = ("analyze", "sparsity", "--pairs", "6", "--time-limit", "0.2", "--jobs", "2", "--out", str(tmp_path),
            "--json")
    first = nasbench(*args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["cached"] is False and report["pairs"] == 6 and report["min"] >= 1
    assert (tmp_path / "ptb-sparsity.png").is_file() and (tmp_path / "ptb-sparsity.pdf").is_file()
    again = json.loads(nasbench(*args).stdout)
    assert again["cached"] is True and again["mean"] == report["mean"]
    cached = json.loads(open(report["cache_path"]).read())
    from benchmarks.cells.graph_edit_distance import random_pairs

    assert cached["ids"] == ptb.search.ids[random_pairs(ptb, 6, 0)].tolist()


def test_features_figure(tmp_path, ptb):
    from nasbench_cli.figures.paper import features_figure

    written = features_figure(ptb, ["shipped-10d"], tmp_path, ["png", "pdf"])
    assert [p.name for p in written] == ["ptb-features.png", "ptb-features.pdf"]
    assert written[0].stat().st_size > 20_000
