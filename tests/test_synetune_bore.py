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
from synetune_searchers import (  # noqa: E402
    assert_batches_only_its_searcher, assert_same_suggestions, box_space, built_searchers)


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
    """Three suggestions each; past BORE's six random draws (30 results) its classifier chooses."""
    from syne_tune.optimizer.schedulers.searchers.bore import Bore

    library, _ = assert_same_suggestions(Bore, batched_bore_class(), n_results, steps=3, seed=7)
    assert library.model.__sklearn_is_fitted__() == (n_results == 30)     # the classifier's path was taken


def test_the_box_encoding_gives_the_librarys_numbers_bit_for_bit():
    from syne_tune.config_space import choice, loguniform, uniform
    from syne_tune.optimizer.schedulers.searchers.utils import make_hyperparameter_ranges

    space = {**box_space(), "fixed": uniform(0.25, 0.25), "zero": uniform(0.0, 3.0)}
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
    from syne_tune.optimizer.baselines import ASHABORE, BORE

    assert_batches_only_its_searcher(use_batched_bore, batched_bore_class(), BORE, ASHABORE, "no BORE searcher")


def test_st_bore_and_st_asha_bore_run_the_batched_searcher(wt2):
    assert built_searchers(wt2, ("st-bore", "st-asha-bore")) == [batched_bore_class()] * 2
