"""SMAC on the real PTB data: configurations in the feature box, snapped to existing architectures,
diverged runs told the penalty, no files left behind, and trials independent of PYTHONHASHSEED."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable

BUDGET_S = 3.6e5                      # 100 h: about 45 architectures at 50 epochs
SMALL = {"initial_per_dim": "2"}      # 20 Sobol points, so that the surrogate drives the rest
REPO = Path(__file__).resolve().parents[1]


def run(ptb, seed, overrides=None, budget_s=BUDGET_S):
    env = Environment(NoTestTable(ptb.search), budget_s)
    algorithm = make_algorithm("smac", {**SMALL, **(overrides or {})})
    assert run_on(env, algorithm, seed, ptb.search.shipped_features).budget_spent
    return env, algorithm


@pytest.fixture(scope="module")
def trial(ptb, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cwd")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        result = run(ptb, seed=4)
    finally:
        os.chdir(cwd)
    return (*result, folder)


def test_configurations_snap_to_the_nearest_untrained_architecture(ptb, trial):
    env, algo, _ = trial
    features = ptb.search.shipped_features
    vectors = np.array(algo.vectors)
    assert len(vectors) > 40
    assert (vectors >= features.min(axis=0)).all() and (vectors <= features.max(axis=0)).all()
    distances = cdist(vectors, features, "cosine")
    for k, row in enumerate(algo.proposals):
        untrained = np.setdiff1d(np.arange(ptb.search.n), algo.proposals[:k])
        assert row == untrained[distances[k, untrained].argmin()]
    assert env.history.arch == algo.proposals[:len(env.history.arch)]
    assert all(e == min(50, n) for e, n in zip(env.history.epochs, ptb.search.n_epochs[env.history.arch]))


def test_cost_is_the_50_epoch_val_loss_or_the_penalty_for_diverged_runs(ptb, trial):
    _, algo, _ = trial
    status, val = ptb.search.status, ptb.search.val_loss
    rows = algo.proposals[:len(algo.losses)]
    assert any(status[r] != "OK" for r in rows), "the trial should meet a diverged architecture"
    assert algo.losses == [10.0 if status[r] != "OK" else val[r, 49] for r in rows]


def test_release_snapping_over_all_architectures_repeats_cost_nothing(ptb):
    env, algo = run(ptb, seed=1, overrides={"new_only": "false"}, budget_s=2.5e5)
    features = ptb.search.shipped_features
    assert algo.proposals == cdist(np.array(algo.vectors), features, "cosine").argmin(axis=1).tolist()
    assert env.history.arch == list(dict.fromkeys(algo.proposals))[:len(env.history.arch)]


def test_leaves_no_files_and_same_seed_same_trajectory(ptb, trial):
    env, _, folder = trial
    assert list(folder.iterdir()) == []
    again, _ = run(ptb, seed=4)
    assert again.history == env.history
    other, _ = run(ptb, seed=5)
    assert other.history.arch != env.history.arch


@pytest.mark.slow
def test_trajectory_does_not_depend_on_python_hash_seed(ptb, trial):
    """SMAC 2 orders its local-search start points by string hashes; the algorithm fixes that order."""
    env, _, _ = trial
    code = (
        "import json, numpy as np\n"
        "from benchmarks.core.environment import Environment\n"
        "from benchmarks.core.registry import load_benchmark\n"
        "from nasbench_cli.harness.simulator import run_on\n"
        "from optimizers.registry import make_algorithm\n"
        f"b = load_benchmark('ptb', {str(ptb.data_dir)!r})\n"
        f"env = Environment(b.search, {BUDGET_S!r})\n"
        f"algorithm = make_algorithm('smac', {SMALL!r})\n"
        "run_on(env, algorithm, 4, b.search.shipped_features)\n"
        "print(json.dumps(env.history.arch))\n")
    hash_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"   # not this process's
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=900,
                            env={**os.environ, "PYTHONHASHSEED": hash_seed})
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == env.history.arch


def test_bad_settings_are_user_errors(ptb):
    env = Environment(ptb.search, BUDGET_S)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("smac", {"retrain_after": "0"}), 0, ptb.search.shipped_features)
    with pytest.raises(UserError):
        run_on(env, make_algorithm("smac"), 0, None)


def test_fast_configuration_equality_answers_as_configspace_does():
    """The cached `Configuration.__eq__` used during a trial agrees with ConfigSpace's own on equal,
    unequal and in-place-changed configurations, and is removed afterwards."""
    from ConfigSpace import Configuration, ConfigurationSpace

    from optimizers.model_based.smac_search import fast_configuration_equality

    space = ConfigurationSpace({"a": (0.0, 1.0), "b": (-2.0, 2.0)}, seed=1)
    configs = space.sample_configuration(20)
    twins = [Configuration(space, vector=c.get_array().copy()) for c in configs[:10]]
    pairs = [(x, y) for x in configs + twins for y in configs + twins]
    expected = [x == y for x, y in pairs]
    original = Configuration.__eq__
    with fast_configuration_equality():
        assert Configuration.__eq__ is not original
        assert [x == y for x, y in pairs] == expected
        assert sum(expected) == len(configs) + 3 * len(twins)        # each twin equals its original
        assert configs[0] in twins and configs[15] not in twins
        twins[0]["a"] = 1.0 - float(configs[0]["a"])                  # changed in place: recomputed
        assert twins[0] != configs[0]
    assert Configuration.__eq__ is original


def test_the_compact_forest_grows_the_trees_smac_would():
    """SMAC's own random forest (leaf cap 2**20, predictions through joblib) and ours (cap: the fit's points
    + 1, so no room reserved for a million leaves; predictions in a plain loop) grow the same trees, node for
    node, and predict the same, on data with and without repeated points; the adapters use ours."""
    from ConfigSpace import ConfigurationSpace
    from smac.model.random_forest import RandomForest

    from optimizers.model_based.smac_search import compact_forest_class, single_threaded_model

    rng = np.random.default_rng(0)
    for dims, n in ((1, 3), (4, 40), (10, 150)):
        space = ConfigurationSpace({f"x{k}": (0.0, 1.0) for k in range(dims)}, seed=1)
        x = rng.random((n, dims))
        x[: n // 3] = np.round(x[: n // 3], 1)                    # repeated points among the rest
        y = rng.random(n)
        settings = dict(configspace=space, log_y=True, n_trees=10, ratio_features=1.0, min_samples_split=2,
                        min_samples_leaf=1, max_depth=2**20, bootstrapping=True, seed=n, n_jobs=1)
        theirs, ours = RandomForest(**settings), compact_forest_class()(**settings)
        theirs.train(x, y)
        ours.train(x, y)
        assert ours._rf_opts["max_leaf_nodes"] == n + 1 and theirs._rf_opts["max_leaf_nodes"] == 2**20
        for a, b in zip(theirs._rf.estimators_, ours._rf.estimators_, strict=True):
            for field in ("feature", "threshold", "value", "children_left", "children_right", "n_node_samples"):
                assert np.array_equal(getattr(a.tree_, field), getattr(b.tree_, field))
        probe = rng.random((30, dims))
        for got, expected in zip(ours.predict_marginalized(probe), theirs.predict_marginalized(probe)):
            assert np.array_equal(got, expected)
        # ours predicts tree by tree without joblib: each tree's column equal, one point or many
        assert type(ours._rf).__name__ == "SequentialEPMRandomForest" and type(theirs._rf).__name__ == "EPMRandomForest"
        for points in (probe, probe[:1]):
            assert np.array_equal(ours._rf.all_trees_pred(points), theirs._rf.all_trees_pred(points))

    from smac import Scenario

    scenario = Scenario(ConfigurationSpace({"x": (0.0, 1.0)}), deterministic=True, seed=0)
    assert isinstance(single_threaded_model(scenario), compact_forest_class())
