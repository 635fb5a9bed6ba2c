"""WikiText-2 as a first-class benchmark: default budget, features for the 10-d algorithms, every
algorithm of the paper with its defaults, and lcbo on a table it uses up."""
import json
import os
import sys

import numpy as np

import cli_process


def run_cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          env={**os.environ})


def test_the_10d_algorithms_read_our_g2v_10d_on_wt2(wt2, ptb):
    from benchmarks.core.features import features, used_kind

    assert used_kind("wt2", "shipped-10d") == "g2v-10d" and used_kind("ptb", "shipped-10d") == "shipped-10d"
    stand_in = features(wt2, "shipped-10d")
    assert stand_in.shape == (wt2.search.n, 10) and np.array_equal(stand_in, features(wt2, "g2v-10d"))
    assert np.array_equal(features(ptb, "shipped-10d"), ptb.search.shipped_features)


def test_run_all_on_wt2_with_defaults(tmp_path, wt2):
    result = run_cli("run", "--algo", "all", "--benchmark", "wt2", "--trials", "1", "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["budget_hours"] == 200.0          # wt2's default: 10% of the time to train its table
    total_h = np.nansum(wt2.search.wall_time_s) / 3600
    assert 0.09 < 200.0 / total_h < 0.11
    for algo in ("rs50e", "rs10e", "hb", "bo10d", "bo50d", "re", "tpe", "smac"):
        record = json.loads((tmp_path / "wt2" / algo / "trial-0.json").read_text())
        assert record["budget_s"] == 200 * 3600.0 and record["final_regret"] is not None
        assert record["simulated_time_s"] > 100 * 3600.0      # the budget is spent, not cut short


def test_lcbo_spends_the_budget_once_the_table_is_used_up(wt2):
    from nasbench_cli.harness.trial import run_algorithm
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm("lcbo", {"metric": "None"})
    env = run_algorithm(wt2.search, algorithm, 0, 200 * 3600.0)
    started = [row for row, level, promoted in algorithm.decisions if not promoted]
    assert sorted(started) == list(range(wt2.search.n))       # every cell screened
    assert max(env.history.epochs) == 50                      # and some trained to the top rung
    assert env.time_s > 190 * 3600.0                          # the trial did not stop with budget left
    last_start = max(i for i, (_, _, promoted) in enumerate(algorithm.decisions) if not promoted)
    after = algorithm.decisions[last_start + 1:]
    assert len(after) >= 3 and all(promoted for _, _, promoted in after)   # promotions past the quotas
