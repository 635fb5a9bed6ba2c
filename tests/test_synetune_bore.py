"""syne-tune's BORE with its candidates scored in one batch (`optimizers/libraries/synetune_bore.py`): the
library's own suggestions, configuration for configuration, and the generators left where the library
leaves them; XGBoost's batch prediction equal to its row-by-row one, bit for bit."""
import importlib.util

import numpy as np
import pytest

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("syne_tune") is None, reason="syne-tune is not installed")

from optimizers.libraries.synetune_bore import (  # noqa: E402
    LinearBoxEncoding, batched_bore_class, box_encoding, distinct_draws, use_batched_bore)


def _space(dims=10):
    from syne_tune.config_space import uniform

    return {f"x{k}": uniform(-1.0 - k, 2.0 + k) for k in range(dims)}


def _results(n, seed):
    """`n` configurations of the space and a loss for each (a smooth function plus noise)."""
    rng = np.random.default_rng(seed)
    configs = [{f"x{k}": float(rng.uniform(-1.0 - k, 2.0 + k)) for k in range(10)} for _ in range(n)]
    losses = [sum((c[f"x{k}"] - 0.3 * k) ** 2 for k in range(10)) + float(rng.normal(0, 0.5)) for c in configs]
    return configs, losses


def test_xgboost_scores_a_batch_as_it_scores_each_row():
    import xgboost

    rng = np.random.default_rng(1)
    x = rng.uniform(size=(400, 10))
    y = (x[:, 0] + x[:, 3] ** 2 + rng.normal(0, 0.3, 400) > 0.9).astype(np.int64)
    model = xgboost.XGBClassifier(random_state=np.random.RandomState(0), n_jobs=1).fit(x[:300], y[:300])
    candidates = rng.uniform(size=(200, 10))
    batch = model.predict_proba(candidates)[:, 1]
    rows = np.array([model.predict_proba(row[None, :])[0, 1] for row in candidates])
    assert batch.tobytes() == rows.tobytes()


@pytest.mark.parametrize("n_results", [3, 30])
def test_batched_bore_suggests_what_syne_tunes_bore_suggests(n_results):
    """The same seed and results: each of three suggestions equal, and the searcher's and NumPy's global
    generators in the same state after each (the candidates are drawn from the global one)."""
    from syne_tune.optimizer.schedulers.searchers.bore import Bore

    configs, losses = _results(n_results, seed=n_results)
    searchers = []
    for cls in (Bore, batched_bore_class()):
        searcher = cls(config_space=_space(), random_seed=7)
        for trial_id, (config, loss) in enumerate(zip(configs, losses)):
            searcher.on_trial_complete(trial_id=trial_id, config=config, metric=loss)
        searchers.append(searcher)
    saved = np.random.get_state()
    try:
        for step in range(3):
            suggested, states = [], []
            for searcher in searchers:
                np.random.seed(1000 + step)
                suggested.append(searcher.suggest())
                states.append((np.random.get_state()[1].tobytes(), searcher.random_state.get_state()[1].tobytes()))
            assert suggested[0] == suggested[1]
            assert states[0] == states[1]
            for searcher in searchers:          # the suggestion's result, as a scheduler would report it
                searcher.on_trial_complete(trial_id=n_results + step, config=suggested[0], metric=float(step))
    finally:
        np.random.set_state(saved)
    assert n_results < 6 or suggested[0] not in configs     # past BORE's 6 random draws, the model chose


def test_the_box_encoding_gives_the_librarys_numbers_bit_for_bit():
    from syne_tune.config_space import choice, loguniform, uniform
    from syne_tune.optimizer.schedulers.searchers.utils import make_hyperparameter_ranges

    space = {**_space(), "fixed": uniform(0.25, 0.25), "zero": uniform(0.0, 3.0)}
    ranges = make_hyperparameter_ranges(space)
    encoding = box_encoding(ranges)
    assert isinstance(encoding, LinearBoxEncoding)
    rng = np.random.default_rng(3)
    configs = [{name: float(rng.uniform(d.lower, d.upper)) for name, d in space.items()} for _ in range(300)]
    configs += [{name: d.lower for name, d in space.items()}, {name: d.upper for name, d in space.items()},
                {name: d.upper + 5e-9 for name, d in space.items()}]        # within the library's EPS
    for config in configs:
        assert encoding.to_ndarray(config).tobytes() == ranges.to_ndarray(config).tobytes()
    with pytest.raises(AssertionError):
        encoding.to_ndarray({**configs[0], "x0": 99.0})
    assert encoding.ndarray_size == ranges.ndarray_size          # the rest is the library's
    for other in ({"log": loguniform(1e-3, 1.0)}, {"c": choice(["a", "b", "c"])}):
        assert not isinstance(box_encoding(make_hyperparameter_ranges(other)), LinearBoxEncoding)


def test_distinct_draws_keep_the_order_drop_repeats_and_give_up_as_the_library_does():
    draws = iter([{"a": 1.0}, {"a": 2.0}, {"a": 1.0}, {"a": 3.0}, {"a": 2.0}, {"a": 4.0}])
    assert distinct_draws(lambda: next(draws), 3) == [{"a": 1.0}, {"a": 2.0}, {"a": 3.0}]
    assert distinct_draws(lambda: {"a": 0.5}, 4, patience=20) == [{"a": 0.5}]


def test_bore_and_asha_bore_get_the_batched_searcher_and_nothing_else_does():
    from syne_tune.optimizer.baselines import ASHA, ASHABORE, BORE

    batched = batched_bore_class()
    single = BORE(_space(), metric="loss", random_seed=0)
    use_batched_bore(single)
    assert type(single.searcher) is batched
    multi = ASHABORE(_space(), metric="loss", time_attr="epoch", max_t=50, random_seed=0)
    use_batched_bore(multi)
    assert multi.searcher.searcher_cls is batched
    with pytest.raises(TypeError, match="no BORE searcher"):
        use_batched_bore(ASHA(_space(), metric="loss", time_attr="epoch", max_t=50, random_seed=0))


def test_st_bore_and_st_asha_bore_run_the_batched_searcher(wt2):
    """Through the registry, as `nasbench run --algo st-bore,st-asha-bore` builds them."""
    from benchmarks.core.features import features
    from optimizers.base import SearchInputs
    from optimizers.registry import make_algorithm

    for algo in ("st-bore", "st-asha-bore"):
        algorithm = make_algorithm(algo, None, wt2.name)
        feats = features(wt2, algorithm.feature_kind)
        algorithm.start(SearchInputs(search=wt2.search, rng=np.random.default_rng(0), seed=0, features=feats))
        searcher = algorithm._scheduler.searcher
        assert batched_bore_class() in (type(searcher), getattr(searcher, "searcher_cls", None))
        algorithm.finish()
