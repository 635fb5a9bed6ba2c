"""Proxy-guided search (prs, phb) on the real PTB table with a controlled score vector."""
import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.registry import make_algorithm


def scores_for(ptb, n_scored=3000, seed=0):
    """A score for a uniform random subset of the benchmark; other cells unscored (NaN)."""
    rng = np.random.default_rng(seed)
    scores = np.full(ptb.search.n, np.nan)
    rows = rng.choice(ptb.search.n, n_scored, replace=False)
    scores[rows] = rng.normal(size=n_scored)
    return scores


def run(ptb, algo, scores, budget_h=150, seed=3, **overrides):
    env = Environment(ptb.search, budget_h * 3600)
    algorithm = make_algorithm(algo, {k: str(v) for k, v in overrides.items()})
    run_on(env, algorithm, seed, None, scores)
    return env


def test_prs_trains_the_best_scored_of_each_pool_and_pays_for_scoring(ptb):
    scores = scores_for(ptb)
    env = run(ptb, "prs", scores, pool_size=10, score_cost_s=30)
    trained = env.history.arch
    assert len(trained) > 10 and len(set(trained)) == len(trained)
    assert np.isfinite(scores[trained]).all()                   # only scored cells
    # replay the draws: each trained cell is the best-scored of its pool of 10
    universe = np.flatnonzero(np.isfinite(scores))
    order = universe[np.random.default_rng(3).permutation(len(universe))]
    for k, row in enumerate(trained):
        pool = order[10 * k:10 * k + 10]
        assert row == pool[np.argmax(scores[pool])]
    training_s = sum(float(np.nansum(ptb.search.wall_time_s[r, :50])) for r in trained)
    assert env.time_s == pytest.approx(training_s + 30 * 10 * len(trained), abs=30 * 10)


def test_pool_of_one_is_plain_random_search_and_charges_nothing(ptb):
    scores = scores_for(ptb)
    env = run(ptb, "prs", scores, pool_size=1, score_cost_s=30)
    training_s = sum(float(np.nansum(ptb.search.wall_time_s[r, :50])) for r in env.history.arch)
    assert env.time_s == pytest.approx(training_s)


def test_phb_starts_brackets_with_the_best_scored_third(ptb):
    scores = scores_for(ptb)
    env = run(ptb, "phb", scores, budget_h=60, oversample=3, score_cost_s=0)
    first_rung = env.history.arch[:27]                          # bracket s=3 starts 27 at 1 epoch
    universe = np.flatnonzero(np.isfinite(scores))
    pool = universe[np.random.default_rng(3).permutation(len(universe))][:81]
    best = pool[np.argsort(-scores[pool], kind="stable")[:27]]
    assert first_rung == best.tolist()
    assert all(e == 1 for e in env.history.epochs[:27])


def test_same_seed_same_trajectory_and_higher_is_better_matters(ptb):
    scores = scores_for(ptb)
    a, b = run(ptb, "prs", scores), run(ptb, "prs", scores)
    assert a.history.arch == b.history.arch and a.time_s == b.time_s
    flipped = run(ptb, "prs", scores, higher_is_better=False)
    assert flipped.history.arch[0] != a.history.arch[0]


def test_no_scores_is_a_user_error(ptb):
    with pytest.raises(UserError, match="nasbench proxies build"):
        run(ptb, "prs", np.full(ptb.search.n, np.nan))
    with pytest.raises(UserError, match="nasbench proxies build"):
        run(ptb, "phb", None)


def test_degenerate_scores_stay_in_the_universe_and_rank_last(ptb):
    """A scored cell whose score is not finite (-inf from load_scores) is drawn and paid for like any
    other, and loses to every finite score, whichever direction is better."""
    scores = scores_for(ptb, n_scored=40)
    rows = np.flatnonzero(~np.isnan(scores))
    scores[rows[:20]] = -np.inf
    for higher in (True, False):
        env = run(ptb, "prs", scores, budget_h=2000, pool_size=40, score_cost_s=30, higher_is_better=higher)
        finite = rows[20:]
        assert env.history.arch == [finite[np.argmax(scores[finite] * (1 if higher else -1))]]
        training_s = float(np.nansum(ptb.search.wall_time_s[env.history.arch[0], :50]))
        assert env.time_s == pytest.approx(training_s + 40 * 30)   # all 40 paid for, degenerate ones too
