"""Issue 47, item 3: the critical-difference code agrees with autorank (Herbold 2020), the well-kept
library that implements Demšar's procedure: the same mean ranks, Friedman p-value and Nemenyi CD on the
same blocks (ties included); the CD to the precision of autorank's approximate studentized-range quantile."""
import importlib.util

import numpy as np
import pytest

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("autorank") is None, reason="autorank is not installed")

from nasbench_cli.results.critical_difference import critical_difference  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mean_ranks_friedman_and_cd_equal_autoranks(seed):
    import pandas as pd

    rng = np.random.default_rng(seed)
    labels = ["rs", "re", "tpe", "lcbo"][: 3 + seed % 2]
    shift = np.linspace(0.0, 0.8, len(labels))
    # three benchmarks x 10 trials; rounded so that some blocks have ties
    regrets = {b: np.round(rng.normal(size=(10, len(labels))) + shift, 1) for b in ("ptb", "wt2", "bert")}
    runs = {b: {label: [{"trial": t, "final_regret": float(v[t, j])} for t in range(10)] for j, label in enumerate(labels)}
            for b, v in regrets.items()}
    ours = critical_difference(runs)
    table = pd.DataFrame(np.vstack(list(regrets.values())), columns=labels)
    from autorank import autorank

    theirs = autorank(table, alpha=0.05, order="ascending", force_mode="nonparametric", verbose=False)
    assert theirs.omnibus == "friedman" and theirs.posthoc == "nemenyi"
    assert ours["blocks"] == 30
    assert ours["friedman_p"] == pytest.approx(theirs.pvalue, rel=1e-9)
    # autorank takes the studentized range quantile from statsmodels' qsturng (Gleason's approximation),
    # we from scipy's exact studentized_range.ppf: they agree to about 1e-6 relative (measured: 1.5e-6)
    assert ours["cd"] == pytest.approx(theirs.cd, rel=1e-5)
    for label in labels:
        assert ours["mean_rank"][label] == pytest.approx(theirs.rankdf.loc[label, "meanrank"], rel=1e-12)
