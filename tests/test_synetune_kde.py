"""syne-tune's kernel-density searcher with its candidates drawn in one batch
(`optimizers/libraries/synetune_kde.py`): the library's own suggestions, configuration for configuration,
and its generators left where the library leaves them."""
import importlib.util

import pytest

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("syne_tune") is None, reason="syne-tune is not installed")

from optimizers.libraries.synetune_kde import batched_kde_class, use_batched_kde  # noqa: E402
from synetune_searchers import (  # noqa: E402
    assert_batches_only_its_searcher, assert_same_suggestions, built_searchers)


@pytest.mark.filterwarnings("ignore:.*entropy initialized numpy.random.Generator:FutureWarning")   # statsmodels'
@pytest.mark.parametrize("n_results", [5, 80, 200])
def test_batched_kde_suggests_what_syne_tunes_kde_suggests(n_results):
    """Eight suggestions each. The densities need more results than dimensions on both sides of the
    split: 80 and 200 are past that (the batched draws are taken), 5 is not."""
    from syne_tune.optimizer.schedulers.searchers.kde import KernelDensityEstimator

    library, _ = assert_same_suggestions(KernelDensityEstimator, batched_kde_class(), n_results, steps=8, seed=11)
    assert (library.good_kde is not None) == (n_results > 5)


def test_tpe_and_bohb_get_the_batched_searcher_and_nothing_else_does():
    from syne_tune.optimizer.baselines import BOHB, TPE

    assert_batches_only_its_searcher(use_batched_kde, batched_kde_class(), TPE, BOHB, "no kernel-density searcher")


def test_st_kde_and_st_bohb_run_the_batched_searcher(wt2):
    assert built_searchers(wt2, ("st-kde", "st-bohb")) == [batched_kde_class()] * 2
