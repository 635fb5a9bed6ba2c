"""Step-function aggregation on a simulated-time grid, checked against hand-made trajectories."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from nasbench_cli.results import aggregate


def record(times_s, regrets, trial=0, budget_s=1000.0):
    """A minimal trial record with the fields aggregation reads."""
    n = len(times_s)
    final = next((r for r in reversed(regrets) if r is not None), None)
    return {"trial": trial, "budget_s": budget_s, "final_regret": final,
            "trajectory": {"time_s": list(times_s), "regret": list(regrets), "incumbent": [None] * n,
                           "incumbent_epoch": [None] * n, "arch": [0] * n, "epochs": [1] * n}}


def test_step_function_holds_value_until_next_change_and_is_absent_before_first_incumbent():
    rec = record([10, 20, 40, 60], [None, 0.5, 0.3, 0.4], budget_s=80)
    grid = np.array([5, 10, 19.9, 20, 30, 40, 59, 60, 80, 100])
    got = aggregate.step_regret(*aggregate.regret_points(rec), grid, end_s=rec["budget_s"])
    # before 20 s (the first call had no incumbent) the trial is absent; after its budget too.
    # The regret may go up (0.3 -> 0.4): the incumbent is chosen by validation loss, not by regret.
    expected = [np.nan, np.nan, np.nan, 0.5, 0.5, 0.3, 0.3, 0.4, 0.4, np.nan]
    np.testing.assert_array_equal(got, expected)


def test_trial_that_never_had_an_incumbent_is_absent_everywhere():
    rec = record([10, 20], [None, None])
    assert aggregate.first_time_s(rec) is None
    assert np.isnan(aggregate.regret_matrix([rec], [5, 15, 500])).all()


def test_mean_is_over_present_trials_on_time_not_step_index():
    # trial A improves quickly (many short steps), trial B slowly; at step index 2 they are at
    # very different times, so averaging by index would pair 0.2 (A at 30 s) with 0.6 (B at 300 s).
    a = record([10, 20, 30], [1.0, 0.5, 0.2], trial=0)
    b = record([100, 200, 300], [0.9, 0.8, 0.6], trial=1)
    grid = np.array([15, 50, 150, 400])
    band = aggregate.mean_band(aggregate.regret_matrix([a, b], grid))
    np.testing.assert_array_equal(band["n"], [1, 1, 2, 2])
    # before B's first evaluation, the mean is A alone (B absent, not 0), and there is no band
    assert band["mean"][0] == pytest.approx(1.0) and band["mean"][1] == pytest.approx(0.2)
    assert np.isnan(band["low"][:2]).all() and np.isnan(band["high"][:2]).all()
    assert band["mean"][2] == pytest.approx((0.2 + 0.9) / 2)
    assert band["mean"][3] == pytest.approx((0.2 + 0.6) / 2)
    half = stats.t.ppf(0.975, 1) * np.std([0.2, 0.6], ddof=1) / math.sqrt(2)
    assert band["low"][3] == pytest.approx(0.4 - half) and band["high"][3] == pytest.approx(0.4 + half)


def test_t_interval_matches_scipy():
    values = [0.3, 0.1, 0.25, 0.4, 0.2]
    mean, low, high = aggregate.t_interval(values)
    ref_low, ref_high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert (mean, low, high) == pytest.approx((np.mean(values), ref_low, ref_high))
    assert math.isnan(aggregate.t_interval([0.3])[1])


def test_time_grid_is_log_spaced_from_first_incumbent_to_budget():
    recs = [record([50, 100], [None, 0.4], budget_s=3600), record([30, 200], [0.7, 0.6], budget_s=3600)]
    grid = aggregate.time_grid_s(recs, n_points=50)
    assert grid[0] == 30 and grid[-1] == 3600 and len(grid) == 50
    ratios = grid[1:] / grid[:-1]
    assert np.allclose(ratios, ratios[0])


def test_mean_rank_by_hand():
    # three algorithms, two trial indices; rank per trial index at each time, averaged over trials.
    per_algo = {
        "x": [record([10], [0.5], trial=0), record([10], [0.1], trial=1)],
        "y": [record([10], [0.2], trial=0), record([10], [0.1], trial=1)],
        "z": [record([50], [0.3], trial=0), record([10], [0.9], trial=1)],
    }
    grid = np.array([20, 100])
    ranks = aggregate.mean_rank(per_algo, grid)
    # t=20: trial 0: z absent -> x 2, y 1; trial 1: x,y tie at 0.1 -> 1.5 each, z 3
    # t=100: trial 0: y 1, z 2, x 3; trial 1 as before
    assert ranks["x"]["mean"] == pytest.approx([(2 + 1.5) / 2, (3 + 1.5) / 2])
    assert ranks["y"]["mean"] == pytest.approx([(1 + 1.5) / 2, (1 + 1.5) / 2])
    assert ranks["z"]["mean"] == pytest.approx([3.0, (2 + 3) / 2])
    np.testing.assert_array_equal(ranks["z"]["n"], [1, 2])
    np.testing.assert_array_equal(ranks["x"]["n"], [2, 2])


def test_mean_rank_needs_two_algorithms_present():
    per_algo = {"x": [record([10], [0.5])], "y": [record([50], [0.2])]}
    ranks = aggregate.mean_rank(per_algo, np.array([20, 100]))
    assert np.isnan(ranks["x"]["mean"][0]) and np.isnan(ranks["y"]["mean"][0])
    assert ranks["x"]["mean"][1] == 2 and ranks["y"]["mean"][1] == 1


def test_ecdf_counts_trials_without_incumbent_as_never_reaching():
    x, y = aggregate.ecdf([0.3, 0.1, math.inf, 0.2])
    np.testing.assert_array_equal(x, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(y, [0.25, 0.5, 0.75])


def test_time_to_reach_is_first_hit():
    rec = record([10, 20, 40, 60], [None, 0.12, 0.09, 0.2])
    assert aggregate.time_to_reach_s(rec, 0.1) == 40
    assert aggregate.time_to_reach_s(rec, 0.05) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 100.0), st.one_of(st.none(), st.floats(0.0, 5.0))), min_size=1, max_size=12),
       st.lists(st.floats(0.0, 150.0), min_size=1, max_size=20))
def test_step_regret_equals_brute_force(steps, grid):
    steps.sort(key=lambda s: s[0])
    times = [t for t, _ in steps]
    regrets = [r for _, r in steps]
    # an incumbent, once found, stays: regrets after the first non-null are never null
    seen = False
    for i, r in enumerate(regrets):
        if r is not None:
            seen = True
        elif seen:
            regrets[i] = regrets[i - 1]
    rec = record(times, regrets)
    got = aggregate.step_regret(*aggregate.regret_points(rec), grid)
    for g, value in zip(grid, got):
        known = [r for t, r in zip(times, regrets) if t <= g and r is not None]
        if known:
            assert value == known[-1]
        else:
            assert math.isnan(value)


def test_busy_share_counts_the_jobs_running_in_each_bin():
    record = {"workers": 2, "jobs": {"start_s": [0.0, 0.0, 10.0]},
              "trajectory": {"time_s": [10.0, 30.0, 20.0]}}          # worker 0: 0-10, 10-20; worker 1: 0-30
    binned = aggregate.busy_share_binned(record, [0.0, 10.0, 25.0, 40.0])   # 20/20, 25/30, 5/30 busy
    assert binned == pytest.approx([1.0, 25 / 30, 5 / 30])
