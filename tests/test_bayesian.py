"""Bayesian optimisation (bo10d / bo50d) on the real PTB data: 20 random picks, then the LCB of a
bagged XGBoost surrogate refit every 10 evaluations on the 50-epoch validation losses."""
import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable

BUDGET_S = 3.6e5    # 100 h: about 45 architectures at 50 epochs, 3 refits


def run(ptb, seed, features=None, name="bo10d", budget_s=BUDGET_S, overrides=None):
    env = Environment(NoTestTable(ptb.search), budget_s)
    algorithm = make_algorithm(name, overrides)
    features = ptb.search.shipped_features if features is None else features
    assert run_on(env, algorithm, seed, features).budget_spent
    return env, algorithm


@pytest.fixture(scope="module")
def trial(ptb):
    return run(ptb, seed=5)


def test_first_20_are_a_random_draw_then_distinct_model_picks(ptb, trial):
    env, algo = trial
    trained = env.history.arch
    expected = np.random.default_rng(5).choice(ptb.search.n, size=20, replace=False)
    assert trained[:20] == expected.tolist()
    assert len(trained) > 40 and len(set(trained)) == len(trained)
    assert trained == algo.evaluated
    assert all(e == min(50, n) for e, n in zip(env.history.epochs, ptb.search.n_epochs[trained]))
    # refits after 20, 30, 40 evaluations; between refits, the next picks down the same ranking
    assert [done for done, *_ in algo.refits] == list(range(20, len(trained), 10))
    for done, _, _, ranking in algo.refits:
        picks = trained[done:done + 10]
        assert ranking[:len(picks)].tolist() == picks
        assert not set(ranking.tolist()) & set(trained[:done])          # only untried candidates
        assert len(ranking) == ptb.search.n - done


def test_surrogate_data_are_50_epoch_val_losses_of_runs_that_did_not_diverge(ptb, trial):
    env, algo = trial
    search = ptb.search
    for done, rows, targets, _ in algo.refits:
        evaluated = env.history.arch[:done]
        ok = [r for r in evaluated if search.status[r] == "OK" and np.isfinite(search.val_loss[r, 49])]
        assert rows == ok and len(ok) < done                           # diverged ones are left out
        assert targets == search.val_loss[ok, 49].tolist()


def test_21st_pick_is_the_lcb_argmin_of_an_independently_refit_bagged_model(ptb, trial):
    """Refit the first model with sklearn-style XGBRegressor on duplicated bootstrap rows (the
    release's BaggingRegressor draws), and check the 21st pick minimises mean - 2 * std."""
    from xgboost import XGBRegressor

    env, algo = trial
    done, rows, targets, _ = algo.refits[0]
    x = ptb.search.shipped_features.astype(np.float32)
    rng = np.random.default_rng(5)
    rng.choice(ptb.search.n, size=20, replace=False)      # the initial draw
    rng.permutation(ptb.search.n)                          # the tie-break order
    y = np.asarray(targets)
    predictions = []
    untried = np.setdiff1d(np.arange(ptb.search.n), env.history.arch[:done])
    for _ in range(14):
        sample = rng.integers(0, len(y), size=len(y) // 2)   # half the data, with replacement
        seed = int(rng.integers(2**31 - 1))
        model = XGBRegressor(n_estimators=100, max_depth=15, tree_method="exact", n_jobs=1, random_state=seed)
        model.fit(x[np.asarray(rows)[sample]], y[sample])
        predictions.append(model.predict(x[untried]).astype(np.float64))
    predictions = np.array(predictions)
    lcb = predictions.mean(axis=0) - 2.0 * predictions.std(axis=0)
    pick = env.history.arch[done]
    assert lcb[np.searchsorted(untried, pick)] <= lcb.min() + 1e-5
    assert lcb.min() < np.median(lcb) - 0.05                  # the bound is informative, not flat


def test_same_seed_same_trajectory_other_seed_differs(ptb, trial):
    again, _ = run(ptb, seed=5)
    assert again.history == trial[0].history
    other, _ = run(ptb, seed=6)
    assert other.history.arch != trial[0].history.arch


def test_bo50d_reads_50d_features_and_runs_on_them(ptb):
    from optimizers.registry import algorithm_class

    assert algorithm_class("bo50d")().feature_kind == "g2v-50d"
    assert algorithm_class("bo10d")().feature_kind == "shipped-10d"
    features = np.random.default_rng(0).normal(size=(ptb.search.n, 50))
    env, algo = run(ptb, seed=1, features=features, name="bo50d", budget_s=2.5e5)
    assert len(env.history.arch) > 20 and algo.refits


def test_bad_settings_are_user_errors(ptb):
    env = Environment(ptb.search, BUDGET_S)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("bo10d", {"bag_fraction": "0"}), 0, ptb.search.shipped_features)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("bo10d", {"tree_method": "gpu"}), 0, ptb.search.shipped_features)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("bo10d"), 0, None)
