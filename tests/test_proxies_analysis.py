"""Correlation table, published values (read from ../shared) and the ablation summaries."""
import numpy as np
import pytest

from benchmarks.proxies import analysis
from benchmarks.proxies.metrics import METRICS
from benchmarks.proxies.score_cache import ScoreCache


@pytest.fixture(scope="module")
def published():
    return analysis.load_published()


def test_published_results_reproduce_the_papers_headline(published):
    assert len(published.log_names) == 8794 and len(set(published.log_names)) == 8794
    corr = analysis.rank_correlation(published.values["hidden_covariance_l1"], published.loss)
    assert corr["n"] == 8794
    assert round(abs(corr["tau"]), 2) == analysis.PAPER_TAU["hidden_covariance_l1"]      # the paper's 0.37
    others = [abs(analysis.rank_correlation(published.values[m], published.loss)["tau"])
              for m in ("activation_distance", "synaptic_saliency", "jacobian_covariance", "jacobian_cosine")]
    assert max(others) <= analysis.PAPER_MAX_OTHER_TAU


def test_published_parameter_file_is_parsed_defensively():
    loss, params = analysis.load_published_params()
    assert len(loss) == 12342                     # distinct log names; repeated headers and junk rows skipped
    ok = np.isfinite(loss) & np.isfinite(params)
    assert ok.sum() > 10000
    assert {10896400.0, 9174800.0} <= set(params[ok].tolist())      # the LSTM and GRU baselines


def test_rank_correlation_basics():
    x = np.array([1.0, 2.0, 3.0, np.nan, 5.0])
    assert analysis.rank_correlation(x, -x) == {"n": 4, "tau": pytest.approx(-1.0), "rho": pytest.approx(-1.0)}
    assert analysis.rank_correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])["tau"] is None


def _table_from(benchmark, rows, metric_values, tmp_path):
    cache = ScoreCache("ptb", root=tmp_path)
    ids = benchmark.search.ids[rows]
    cache.append([(rid, {m: float(v[i]) for m, v in metric_values.items()}, 1.0, 1.0)
                  for i, rid in enumerate(ids)], tuple(metric_values))
    return cache.load()


def test_correlation_table_populations_and_matching_by_log_name(ptb, published, tmp_path):
    names = np.array(ptb.search.log_names)
    pub_of = {n: i for i, n in enumerate(published.log_names)}
    matched = np.array([n in pub_of for n in names])
    rows = np.flatnonzero(matched)[:300]
    completed = (ptb.search.status == "OK") & (ptb.search.n_epochs == 50)
    diverged_late = np.flatnonzero(~completed & np.isfinite(ptb.final_test_loss))   # a loss, but not completed
    rows = np.concatenate([rows, np.flatnonzero(~matched)[:200], diverged_late])
    rows = np.unique(rows)
    loss = ptb.final_test_loss[rows]
    published_l1 = np.array([published.values["hidden_covariance_l1"][pub_of[n]] if n in pub_of else 0.0
                             for n in names[rows]])
    table = _table_from(ptb, rows, {"num_params": -loss, "hidden_covariance_l1": published_l1}, tmp_path)
    result = {r["metric"]: r for r in analysis.correlation_table(ptb, table, published)}
    np_row = result["num_params"]
    assert np_row["all_scored"]["n"] == int(np.isfinite(loss).sum())
    assert np_row["all_scored"]["tau"] == pytest.approx(-1.0)
    assert len(diverged_late) > 0
    assert np_row["population"]["n"] == int((completed[rows] & np.isfinite(loss)).sum())
    assert np_row["population"]["n"] == np_row["all_scored"]["n"] - len(diverged_late)
    l1 = result["hidden_covariance_l1"]
    assert l1["ours_vs_published"]["n"] == int(matched[rows].sum()) and l1["ours_vs_published"]["rho"] == pytest.approx(1.0)
    assert l1["ours_same_cells"]["tau"] == pytest.approx(l1["published_same_cells"]["tau"])
    assert result["jacobian_cosine"]["all_scored"]["n"] == 0


def test_ablation_summary_separates_cell_and_repeat_spread():
    rng = np.random.default_rng(0)
    cells = np.arange(10.0)[:, None] * 10
    values = np.stack([cells + rng.normal(0, 0.1, (10, 10)), rng.normal(0, 1, (10, 10))], axis=2)
    summary = analysis.ablation_summary({"metrics": ("a", "b"), "values": values})
    a, b = summary
    assert a["ratio"] < 0.05 and a["rank_stability"] == pytest.approx(1.0)
    assert b["ratio"] > 1 and abs(b["rank_stability"]) < 0.3


def test_run_ablation_is_cached_and_resumes(ptb, tmp_path):
    pytest.importorskip("torch")
    cache = ScoreCache("ptb", batch_size=4, seq_len=3, root=tmp_path)
    rows = analysis.ablation_rows(ptb)[:2]
    calls = []
    first = analysis.run_ablation(ptb, cache, "minibatch", cells=rows, repeats=2,
                                  progress=lambda d, t: calls.append(d))
    assert calls == [1, 2, 3, 4] and first["values"].shape == (2, 2, len(METRICS))
    k = METRICS.index("num_params")
    assert np.all(first["values"][:, :, k] == ptb.search.num_params[rows][:, None])
    h = METRICS.index("hidden_covariance_l1")
    assert first["values"][0, 0, h] != first["values"][0, 1, h]       # another minibatch, another score
    again = analysis.run_ablation(ptb, cache, "minibatch", cells=rows, repeats=2,
                                  progress=lambda d, t: calls.append(-1))
    assert calls == [1, 2, 3, 4]
    assert np.array_equal(again["values"], first["values"], equal_nan=True)
