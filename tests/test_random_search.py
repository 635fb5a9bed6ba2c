"""Random search on the real PTB data: distinct architectures, each trained exactly its epochs."""
import numpy as np
import pytest

from benchmarks.core.environment import Environment
from nasbench_cli.harness.simulator import run_on
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable

BUDGET_S = 2.0e5    # about 25 architectures at 50 epochs, 125 at 10


def run(ptb, name, seed, budget_s=BUDGET_S, overrides=None, features=None):
    """Run one trial; returns (env, observations of every train call)."""
    env = Environment(NoTestTable(ptb.search), budget_s)
    observations = []
    record = env.record

    def recording(*args):
        obs = record(*args)
        observations.append(obs)
        return obs

    env.record = recording
    assert run_on(env, make_algorithm(name, overrides), seed, features).budget_spent
    return env, observations


@pytest.mark.parametrize("name, epochs", [("rs50e", 50), ("rs10e", 10)])
def test_trains_distinct_architectures_to_exactly_its_epochs(ptb, name, epochs):
    env, observations = run(ptb, name, seed=3)
    rows = [o.arch for o in observations]
    assert len(rows) > 10 and len(set(rows)) == len(rows)
    assert all(o.requested_epochs == epochs and o.from_epoch == 0 for o in observations)
    logged = ptb.search.n_epochs[rows]
    assert [o.epochs for o in observations] == np.minimum(logged, epochs).tolist()
    assert env.time_s <= BUDGET_S


def test_draws_from_the_whole_benchmark_including_failures(ptb):
    rows = [o.arch for seed in range(4) for o in run(ptb, "rs10e", seed)[1]]
    assert len(set(rows)) > 400
    assert (ptb.search.status[rows] != "OK").any()          # it cannot know which diverge
    assert np.ptp(rows) > 0.9 * ptb.search.n


def test_same_seed_same_trajectory_other_seed_differs(ptb):
    first = run(ptb, "rs50e", seed=7)[0].history
    again = run(ptb, "rs50e", seed=7)[0].history
    other = run(ptb, "rs50e", seed=8)[0].history
    assert first == again
    assert first.arch != other.arch


def test_returns_when_every_architecture_is_trained(ptb):
    env = Environment(ptb.search)                            # no budget
    run_on(env, make_algorithm("rs10e", {"epochs": "1"}), 0, None)
    assert sorted(env.history.arch) == list(range(ptb.search.n))


@pytest.mark.parametrize("name", ["rs50e", "rs10e", "hb", "re"])
def test_never_reads_an_attribute_named_test(ptb, name):
    features = ptb.search.shipped_features if name == "re" else None
    env, observations = run(ptb, name, seed=0, features=features)     # NoTestTable raises on *test*
    assert len(observations) > 10
