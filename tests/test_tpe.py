"""TPE on the real PTB data: proposals in the feature box, snapped to existing architectures by cosine
distance, diverged runs scored with the penalty, and the fast engine equal to hyperopt's fmin."""
import numpy as np
import pytest
from scipy.spatial.distance import cdist

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable

BUDGET_S = 3.6e5    # 100 h: about 45 architectures at 50 epochs


def run(ptb, seed, features=None, budget_s=BUDGET_S, overrides=None, exhausts=True):
    env = Environment(NoTestTable(ptb.search), budget_s)
    algorithm = make_algorithm("tpe", overrides)
    features = ptb.search.shipped_features if features is None else features
    assert run_on(env, algorithm, seed, features).budget_spent == exhausts
    return env, algorithm


def run_fmin(ptb, seed, features, budget_s, overrides=None) -> list:
    """The proposals of hyperopt's own `fmin` driving a plain one-worker loop (the reference the
    ask/tell engines must equal): the objective snaps, trains with `Environment.train`, and the
    budget's BudgetExhausted propagates out of fmin."""
    from functools import partial

    from hyperopt import Trials, fmin, hp, tpe as hyperopt_tpe

    from benchmarks.core.environment import BudgetExhausted
    from optimizers.snapping import nearest_by_cosine
    from optimizers.model_based.tpe import labels

    settings = make_algorithm("tpe", overrides).settings
    env = Environment(NoTestTable(ptb.search), budget_s)
    low, high = features.min(axis=0), features.max(axis=0)
    names = labels(features.shape[1])
    known, vectors = {}, []

    def objective(point):
        vector = np.array([point[name] for name in names], dtype=float)
        vectors.append(vector)
        row = nearest_by_cosine(features, vector)
        if row not in known:
            obs = env.train(row, settings.epochs)
            ok = obs.status == "OK" and obs.epochs == settings.epochs and np.isfinite(obs.last_val_loss)
            known[row] = obs.last_val_loss if ok else settings.penalty
        return known[row]

    space = {name: hp.uniform(name, float(lo), float(hi)) for name, lo, hi in zip(names, low, high)}
    algo = partial(hyperopt_tpe.suggest, n_startup_jobs=settings.n_startup_jobs,
                   n_EI_candidates=settings.n_ei_candidates, gamma=settings.gamma)
    with pytest.raises(BudgetExhausted):
        fmin(objective, space, algo=algo, max_evals=2**62, trials=Trials(), rstate=np.random.default_rng(seed),
             max_queue_len=settings.queue_len, show_progressbar=False, verbose=False,
             catch_eval_exceptions=False, return_argmin=False)
    return vectors


@pytest.fixture(scope="module")
def trial(ptb):
    return run(ptb, seed=3)


def test_proposals_lie_in_the_box_and_snap_to_the_nearest_architecture_by_cosine(ptb, trial):
    env, algo = trial
    features = ptb.search.shipped_features
    vectors = np.array(algo.vectors)
    assert len(vectors) > 40
    assert (vectors >= features.min(axis=0)).all() and (vectors <= features.max(axis=0)).all()
    nearest = cdist(vectors, features, "cosine").argmin(axis=1)       # the release's snapping
    assert algo.proposals == nearest.tolist()
    # each new architecture is trained once, 50 epochs; a repeat trains nothing
    first_seen = list(dict.fromkeys(algo.proposals))
    assert env.history.arch == first_seen[:len(env.history.arch)]
    assert all(e == min(50, n) for e, n in zip(env.history.epochs, ptb.search.n_epochs[env.history.arch]))


def test_objective_is_the_50_epoch_val_loss_or_the_penalty_for_diverged_runs(ptb, trial):
    _, algo = trial
    status, val = ptb.search.status, ptb.search.val_loss
    rows = algo.proposals[:len(algo.losses)]
    diverged = [k for k, r in enumerate(rows) if status[r] != "OK"]
    assert diverged, "the trial should meet at least one diverged architecture"
    for k, row in enumerate(rows):
        expected = 10.0 if status[row] != "OK" else val[row, 49]
        assert algo.losses[k] == expected


def test_fast_engine_makes_the_same_proposals_as_hyperopt_fmin(ptb):
    fast_env, fast = run(ptb, seed=11, budget_s=2.5e5)
    slow_env, slow = run(ptb, seed=11, budget_s=2.5e5, overrides={"engine": "hyperopt"})
    assert len(fast.vectors) > 25                                      # past the 20 random startup points
    assert np.array_equal(np.array(fast.vectors), np.array(slow.vectors))
    assert fast_env.history == slow_env.history
    reference = run_fmin(ptb, 11, ptb.search.shipped_features, 2.5e5)
    assert np.array_equal(np.array(fast.vectors), np.array(reference))


def test_fast_engine_equals_fmin_with_two_digit_labels_and_small_queue(ptb):
    features = np.random.default_rng(1).normal(size=(ptb.search.n, 12))
    settings = {"queue_len": "3", "n_startup_jobs": "5"}
    _, fast = run(ptb, seed=2, features=features, budget_s=1.2e5, overrides=settings)
    _, slow = run(ptb, seed=2, features=features, budget_s=1.2e5, overrides={**settings, "engine": "hyperopt"})
    assert len(fast.vectors) > 10
    assert np.array_equal(np.array(fast.vectors), np.array(slow.vectors))
    assert np.array_equal(np.array(fast.vectors), np.array(run_fmin(ptb, 2, features, 1.2e5, settings)))


def test_same_seed_same_trajectory_other_seed_differs(ptb, trial):
    again, _ = run(ptb, seed=3)
    assert again.history == trial[0].history
    other, _ = run(ptb, seed=4)
    assert other.history.arch != trial[0].history.arch


def test_stops_when_proposals_keep_landing_on_known_architectures(ptb):
    env, algo = run(ptb, seed=0, budget_s=1e12, overrides={"max_repeats": "1"}, exhausts=False)
    assert algo.proposals[-1] in algo.proposals[:-1]
    assert len(set(algo.proposals)) == len(algo.proposals) - 1 == len(env.history.arch)


def test_bad_settings_are_user_errors(ptb):
    env = Environment(ptb.search, BUDGET_S)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("tpe", {"engine": "optuna"}), 0, ptb.search.shipped_features)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("tpe"), 0, None)
