"""Regularized evolution on the real PTB data and 10-d features: aging population, tournaments, snapping."""
import math

import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.evolution.regularized_evolution import RegularizedEvolution
from optimizers.registry import make_algorithm
from optimizers.snapping import nearest_by_cosine

BUDGET_S = 6.0e5    # about 75 architectures at 50 epochs


@pytest.fixture(scope="module")
def features(ptb):
    return ptb.search.shipped_features


def run(ptb, features, seed, overrides=None, budget_s=BUDGET_S):
    env = Environment(ptb.search, budget_s)
    algorithm = make_algorithm("re", overrides)
    assert run_on(env, algorithm, seed, features).budget_spent
    return env, algorithm


def test_population_of_20_ages_out_the_oldest(ptb, features):
    env, algo = run(ptb, features, seed=0)
    population, members = algo.settings.population, algo.members
    assert population == 20 and len(members) > 3 * population
    assert list(algo.population) == members[-population:]            # the oldest died, in order
    first = env.history.arch[:population]
    assert members[:population] == first and len(set(first)) == population


def test_parents_win_a_tournament_of_10_and_children_are_new_or_known(ptb, features):
    env, algo = run(ptb, features, seed=1)
    P, S = algo.settings.population, algo.settings.sample
    fitness = algo.fitness
    children = algo.members[P:]
    assert len(children) > 2 * P
    for k, (parent, child) in enumerate(zip(algo.parents, children)):
        alive = algo.members[k:k + P]                                 # population when the parent was picked
        assert parent in alive
        # the best of S distinct members is beaten by at most P - S of the P members
        assert sum(fitness[row] < fitness[parent] for row in alive) <= P - S
        assert math.isfinite(fitness[parent])
    assert sum(c == p for p, c in zip(algo.parents, children)) <= len(children) // 20   # noise up to std 8
    trained = env.history.arch
    assert len(trained) == len(set(trained))                          # nothing is trained twice
    assert set(trained) <= set(algo.members)
    assert all(e == min(50, n) for e, n in zip(env.history.epochs, ptb.search.n_epochs[trained]))


def test_fitness_is_the_50_epoch_val_loss_or_inf_for_failures(ptb, features):
    env, algo = run(ptb, features, seed=2)
    for row, value in algo.fitness.items():
        if ptb.search.status[row] == "OK":
            assert value == ptb.search.val_loss[row, 49]
        else:
            assert value == math.inf


def test_mutation_escalates_noise_until_the_child_differs(ptb, features):
    algo = RegularizedEvolution()
    low, high = features.min(axis=0), features.max(axis=0)
    trained = np.zeros(len(features), dtype=bool)
    parent = 77
    tiny = algo._mutate(features, parent, low, high, (1e-9, 1e-9), trained, np.random.default_rng(0))
    assert tiny == parent                                             # every std snapped back: parent
    child = algo._mutate(features, parent, low, high, (1e-9, 8.0), trained, np.random.default_rng(0))
    assert child != parent
    rng = np.random.default_rng(0)
    rng.standard_normal(features.shape[1])                            # the first (tiny) draw
    vector = np.clip(features[parent] + rng.standard_normal(features.shape[1]) * 8.0, low, high)
    assert child == nearest_by_cosine(features, vector)


def test_new_children_only_trains_a_new_architecture_every_step(ptb, features):
    env, algo = run(ptb, features, seed=3, overrides={"new_children_only": "true"})
    assert algo.members == env.history.arch
    assert len(set(algo.members)) == len(algo.members)


def test_same_seed_same_trajectory(ptb, features):
    first = run(ptb, features, seed=4)[0].history
    assert first == run(ptb, features, seed=4)[0].history
    assert first.arch != run(ptb, features, seed=5)[0].history.arch


def test_bad_settings_are_user_errors(ptb, features):
    env = Environment(ptb.search, BUDGET_S)
    for overrides in ({"sample": "30"}, {"noise_stds": "0.5,-1"}):
        with pytest.raises(UserError):
            run_on(env, make_algorithm("re", overrides), 0, features)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("re"), 0, None)
