"""`nasbench proxies ...` and `nasbench analyze proxies` end to end on the real data (small and fast)."""
import importlib.util
import json
import os
import sys

import pytest

import cli_process
from session_cache import seeded_cache

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")

RNN = {"f": {"op": "linear", "input": ["x", "h_prev_0"]}, "h_new_0": {"op": "activation_tanh", "input": ["f"]}}


def run_cli(*args, cache=None):
    env = {**os.environ}
    if cache is not None:
        env["NASBENCH_CACHE"] = str(cache)
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          env=env)


def test_score_recipe_file_and_log_file(tmp_path, ptb):
    cell = tmp_path / "rnn.json"
    cell.write_text(json.dumps(RNN))
    out = run_cli("proxies", "score", "--recipe", str(cell), "--metric", "hidden_covariance_l1,num_params",
                  "--batch-size", "4", "--seq-len", "3", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["scores"]["num_params"] == 5_731_600 and info["batch_size"] == 4
    assert isinstance(info["scores"]["hidden_covariance_l1"], float)
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"recepie": json.dumps(RNN), "num_params": 5731600}))
    again = run_cli("proxies", "score", "--recipe", str(log), "--metric", "hidden_covariance_l1,num_params",
                    "--batch-size", "4", "--seq-len", "3", "--json")
    assert json.loads(again.stdout)["scores"] == info["scores"]      # same seed, same values


@pytest.mark.parametrize("args, message", [
    (["proxies", "score"], "exactly one of --arch"),
    (["proxies", "score", "--arch", "1000000", "--metric", "bogus"], "unknown metric"),
    (["proxies", "score", "--arch", "12"], "unknown architecture id"),
    (["proxies", "score", "--recipe", "/nonexistent/cell.json"], "cannot read recipe"),
    (["proxies", "build", "--metric", "num_params"], "--sample N or --all"),
])
def test_user_mistakes_exit_2_with_one_line(args, message, ptb):
    out = run_cli(*args)
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr


def test_bad_recipe_is_a_user_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"h_new_0": {"op": "conv", "input": ["x"]}}))
    out = run_cli("proxies", "score", "--recipe", str(bad))
    assert out.returncode == 2 and "unknown op 'conv'" in out.stderr


def test_build_status_and_analyze(tmp_path, ptb, monkeypatch):
    cache = seeded_cache(tmp_path / "cache")
    out = run_cli("proxies", "build", "--metric", "num_params", "--sample", "30", "--json", cache=cache)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["scored_now"] == 30 and summary["failed"] == 0
    again = json.loads(run_cli("proxies", "build", "--metric", "num_params", "--sample", "40", "--json",
                               cache=cache).stdout)
    assert (again["already_cached"], again["scored_now"]) == (30, 10)
    status = json.loads(run_cli("proxies", "status", "--json", cache=cache).stdout)
    assert status["metrics"]["num_params"]["scored"] == 40 and status["metrics"]["jacobian_cosine"]["scored"] == 0
    from click.testing import CliRunner

    from nasbench_cli.commands.analyze_proxies import proxies

    monkeypatch.setenv("NASBENCH_CACHE", str(cache))
    result = CliRunner().invoke(proxies, ["--no-ablation", "--json"])
    assert result.exit_code == 0, result.output
    table = {r["metric"]: r for r in json.loads(result.output)["metrics"]}
    assert table["num_params"]["all_scored"]["n"] > 20 and table["num_params"]["all_scored"]["tau"] is not None
    assert table["hidden_covariance_l1"]["published_csv"]["n"] == 8794


def test_check_params_on_all_cells(ptb):
    out = run_cli("proxies", "check-params", "--built", "3", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["analytic_checked"] == 14322 and info["analytic_differ"] == [] and info["built_differ"] == []
    assert info["built_checked"] == 6 and info["vocab_size"] == 10000


def test_proxy_trials_are_not_reused_when_the_score_table_changes(tmp_path, ptb):
    """A prs result depends on the cached scores: its file records their checksum, a rerun on the same
    scores does nothing, and a rerun after the score table grew is refused until --overwrite."""
    cache = seeded_cache(tmp_path / "cache")
    assert run_cli("proxies", "build", "--metric", "num_params", "--sample", "300", cache=cache).returncode == 0
    args = ("run", "--algo", "prs", "--set", "prs.metric=num_params", "--trials", "2", "--budget-hours", "20",
            "--jobs", "1", "--out", str(tmp_path / "results"), "--json")
    first = run_cli(*args, cache=cache)
    assert first.returncode == 0, first.stderr
    record = json.loads((tmp_path / "results" / "ptb" / "prs+metric-num_params" / "trial-0.json").read_text())
    assert record["scored_cells"] == 300 and len(record["scores_checksum"]) == 16
    again = run_cli(*args, cache=cache)
    assert again.returncode == 0 and json.loads(again.stdout)["ran"] == 0
    assert run_cli("proxies", "build", "--metric", "num_params", "--sample", "400", cache=cache).returncode == 0
    refused = run_cli(*args, cache=cache)
    assert refused.returncode == 2 and "other training-free scores" in refused.stderr
    assert "300 cells scored then" in refused.stderr and "Traceback" not in refused.stderr
    redone = run_cli(*args, "--overwrite", cache=cache)
    assert redone.returncode == 0, redone.stderr
    assert json.loads((tmp_path / "results" / "ptb" / "prs+metric-num_params" / "trial-0.json").read_text())["scored_cells"] == 400


def test_analyze_says_when_an_ablation_will_take_minutes(tmp_path, ptb, monkeypatch):
    """The first run of the ablations scores 10 cells x 10 repeats (minutes): it is announced, once."""
    from click.testing import CliRunner

    from benchmarks.proxies import analysis
    from nasbench_cli.commands.analyze_proxies import proxies

    cache = seeded_cache(tmp_path / "cache")
    assert run_cli("proxies", "build", "--metric", "num_params", "--sample", "30", "--json",
                   cache=cache).returncode == 0
    monkeypatch.setenv("NASBENCH_CACHE", str(cache))
    ran = []

    def quick_ablation(benchmark, cache, kind, progress=None):      # the scoring itself is tested elsewhere
        ran.append(kind)
        return {"ids": [], "path": "none"}

    monkeypatch.setattr(analysis, "run_ablation", quick_ablation)
    monkeypatch.setattr(analysis, "ablation_summary", lambda run: {})
    monkeypatch.setattr("nasbench_cli.commands.analyze_proxies._print_table", lambda result: None)
    first = CliRunner().invoke(proxies, [])
    assert first.exit_code == 0, first.output
    assert first.stderr.count("once (a few minutes on 2 cores), then cached; --no-ablation skips it") == 2
    monkeypatch.setattr(analysis, "ablation_is_cached", lambda *args, **kwargs: True)
    cached = CliRunner().invoke(proxies, [])
    assert cached.exit_code == 0 and "a few minutes" not in cached.stderr and ran == ["weights", "minibatch"] * 2
