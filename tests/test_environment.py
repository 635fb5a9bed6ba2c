"""Bookkeeping of the simulated training environment, on the real PTB data (hypothesis)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.core.environment import BudgetExhausted, Environment
from benchmarks.core.errors import UserError
from benchmarks.core.regret import trajectory

LSTM, RNN = 1000001, 1000000


@pytest.fixture(scope="module")
def rows(ptb):
    """A pool of rows mixing complete logs and diverged ones (short logs, 0-epoch logs)."""
    rng = np.random.default_rng(7)
    short = np.flatnonzero((ptb.search.n_epochs < 50) & (ptb.search.n_epochs > 0))
    empty = np.flatnonzero(ptb.search.n_epochs == 0)
    complete = np.flatnonzero(ptb.search.n_epochs == 50)
    return np.concatenate([rng.choice(complete, 12, replace=False), rng.choice(short, 6, replace=False),
                           empty[:2], [ptb.search.index_of(LSTM)]]).tolist()


calls_strategy = st.lists(st.tuples(st.integers(0, 20), st.integers(1, 50)), min_size=1, max_size=40)
hyp = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def replay(ptb, rows, calls):
    env = Environment(ptb.search)
    for slot, epochs in calls:
        env.train(rows[slot], epochs)
    return env


@hyp
@given(calls=calls_strategy)
def test_charged_time_is_the_sum_of_distinct_epochs_trained(ptb, rows, calls):
    env = replay(ptb, rows, calls)
    reached = {}
    for slot, epochs in calls:
        row = rows[slot]
        reached[row] = max(reached.get(row, 0), min(epochs, int(ptb.search.n_epochs[row])))
    expected = sum(float(np.sum(ptb.search.wall_time_s[row, :e])) for row, e in reached.items())
    assert math.isclose(env.time_s, expected, rel_tol=1e-12, abs_tol=1e-9)
    assert all(env.epochs_trained[row] == e for row, e in reached.items())
    assert np.all(np.diff(env.history.time_s) >= 0) and len(env.history.time_s) == len(calls)


@hyp
@given(calls=calls_strategy)
def test_incumbent_is_the_best_validation_epoch_seen_and_regret_is_never_negative(ptb, rows, calls):
    env = Environment(ptb.search)
    seen = {}
    for slot, epochs in calls:
        row = rows[slot]
        obs = env.train(row, epochs)
        for offset, value in enumerate(obs.val_loss):
            if math.isfinite(value):
                seen[(row, obs.from_epoch + offset + 1)] = value
        if seen:
            best = min(seen.values())
            row_, epoch_ = env.incumbent
            assert seen[(row_, epoch_)] == best
        else:
            assert env.incumbent is None
    traj = trajectory(ptb, env.history)
    assert all(r is None or r >= 0 for r in traj["regret"])
    finite = [r for r in traj["regret"] if r is not None]
    if finite:
        row, epoch = env.incumbent
        assert math.isclose(finite[-1], ptb.test_loss[row, epoch - 1] - ptb.l_star)


@hyp
@given(calls=calls_strategy, data=st.data())
def test_another_order_of_continuations_reaches_the_same_final_state(ptb, rows, calls, data):
    shuffled = data.draw(st.permutations(calls))
    a, b = replay(ptb, rows, calls), replay(ptb, rows, shuffled)
    assert np.array_equal(a.epochs_trained, b.epochs_trained)
    assert math.isclose(a.time_s, b.time_s, rel_tol=1e-12, abs_tol=1e-9)
    assert a.incumbent == b.incumbent


def test_continuation_charges_only_the_extra_epochs(ptb):
    env = Environment(ptb.search)
    row = ptb.search.index_of(LSTM)
    wall = ptb.search.wall_time_s[row]
    first = env.train(row, 10)
    assert first.cost_s == pytest.approx(wall[:10].sum()) and len(first.val_loss) == 10
    second = env.train(row, 25)
    assert second.cost_s == pytest.approx(wall[10:25].sum())
    assert second.from_epoch == 10 and second.epochs == 25
    assert np.array_equal(second.val_loss, ptb.search.val_loss[row, 10:25])
    again = env.train(row, 20)
    assert again.cost_s == 0 and len(again.val_loss) == 0 and again.epochs == 25
    assert env.time_s == pytest.approx(wall[:25].sum())


def test_training_to_e_epochs_shows_epochs_1_to_e_only(ptb):
    env = Environment(ptb.search)
    row = ptb.search.index_of(RNN)
    obs = env.train(row, 3)
    assert np.array_equal(obs.val_loss, ptb.search.val_loss[row, :3])
    assert obs.last_val_loss == ptb.search.val_loss[row, 2]
    assert env.incumbent[1] <= 3


def test_diverged_run_stops_where_its_log_stops(ptb):
    row = int(np.flatnonzero((ptb.search.n_epochs == 7) & (ptb.search.status != "OK"))[0])
    env = Environment(ptb.search)
    obs = env.train(row, 50)
    assert obs.epochs == 7 and obs.diverged and obs.status == ptb.search.status[row]
    assert obs.cost_s == pytest.approx(np.nansum(ptb.search.wall_time_s[row]))
    early = Environment(ptb.search).train(row, 5)
    assert early.status == "OK" and early.epochs == 5


def test_budget_stops_a_call_that_would_end_after_it(ptb):
    row = ptb.search.index_of(LSTM)
    ten_epochs = float(ptb.search.wall_time_s[row, :10].sum())
    env = Environment(ptb.search, budget_s=ten_epochs * 1.5)
    env.train(row, 10)
    with pytest.raises(BudgetExhausted):
        env.train(row, 20)
    assert env.time_s == pytest.approx(ten_epochs)
    assert env.epochs_trained[row] == 10 and len(env.history.time_s) == 1


def test_addressing_by_id_and_bad_input(ptb):
    env = Environment(ptb.search)
    assert env.train_id(LSTM, 1).recepie_id == LSTM
    with pytest.raises(UserError, match="unknown architecture id"):
        env.train_id(123, 1)
    with pytest.raises(UserError, match="epochs must be"):
        env.train(0, 0)
    with pytest.raises(UserError, match="epochs must be"):
        env.train(0, 51)
    with pytest.raises(UserError, match="out of range"):
        env.train(-1, 5)


def test_environment_cannot_reach_test_losses(ptb):
    env = Environment(ptb.search)
    reachable = [env, env.search, env.history]
    for obj in reachable:
        for name in dir(obj):
            if name.startswith("__"):
                continue
            assert "test" not in name.lower()
            value = getattr(obj, name, None)
            assert value is not ptb.test_loss


def test_views_of_one_table_share_its_prefix_index_and_few_are_kept(ptb, wt2):
    """A process that wraps the table anew for each trial (the tests' NoTestTable, a plugin's view) holds one
    prefix index (17 MB on ptb), not one per trial: the index belongs to the arrays, and only the last few
    pairs of arrays keep theirs."""
    from benchmarks.core import environment
    from no_test_table import NoTestTable

    first = Environment(NoTestTable(ptb.search))._index
    assert all(Environment(NoTestTable(ptb.search))._index is first for _ in range(5))
    assert np.array_equal(first.prefix_best_val[:, 50], np.fmin.reduce(np.where(
        np.isfinite(ptb.search.val_loss), ptb.search.val_loss, np.inf), axis=1))
    for k in range(environment._PREFIX_CACHE_SIZE + 2):      # other arrays of the same shape: new tables
        table = type("Table", (), {"name": "wt2", "val_loss": wt2.search.val_loss + k,
                                   "wall_time_s": wt2.search.wall_time_s})()
        environment._prefix_index(table)
    assert len(environment._PREFIX_CACHE) == environment._PREFIX_CACHE_SIZE
    assert environment._prefix_index(ptb.search) is not first       # evicted: computed again, equal
    assert np.array_equal(environment._prefix_index(ptb.search).cum_time_s, first.cum_time_s)
