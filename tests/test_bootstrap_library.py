"""The suites' stratified-bootstrap intervals (`nasbench_cli.results.suite_report.stratified_interval`,
rliable's definition: trials resampled with replacement within each task) against scipy's bootstrap,
which resamples each of several samples independently: the same resampling scheme.

rliable itself cannot be installed in a working state next to our other libraries (rliable 1.2.0, its
latest release, needs arch < 8, whose 7.x fails to import under pandas 3; with arch 8 rliable's own
call fails), so scipy stands in as the library check.

Tolerance: two Monte Carlo estimates of the same percentiles. The 2.5% percentile of B resamples has a
Monte Carlo sd of about sqrt(p(1-p)/B) / phi(1.96) = 0.06 bootstrap standard errors at B = 2,000 (ours)
and 0.04 at B = 4,000 (scipy's here), 0.073 SE combined; 0.3 SE is four of those sds.
"""
import numpy as np
import pytest
from scipy.stats import bootstrap

from nasbench_cli.results.suite_report import BOOTSTRAP_RESAMPLES, iqm, stratified_interval


@pytest.mark.parametrize("statistic", [np.mean, iqm], ids=["mean", "iqm"])
def test_stratified_intervals_agree_with_scipys_bootstrap(statistic):
    rng = np.random.default_rng(7)
    tasks = [np.abs(rng.normal(0.3, 0.2, 30)) * scale for scale in rng.uniform(0.5, 2.0, 8)]  # 8 tasks, 30 trials
    tasks[3] = tasks[3][:12]                                           # one task with fewer trials
    ours = stratified_interval(tasks, statistic)
    theirs = bootstrap(tuple(tasks), lambda *groups, axis: statistic(np.concatenate(groups, axis=axis), axis=axis),
                       vectorized=True, n_resamples=4000, method="percentile", random_state=np.random.default_rng(1))
    tolerance = 0.3 * theirs.standard_error
    assert BOOTSTRAP_RESAMPLES == 2000
    assert ours[0] == pytest.approx(theirs.confidence_interval.low, abs=tolerance)
    assert ours[1] == pytest.approx(theirs.confidence_interval.high, abs=tolerance)
    assert ours[0] < statistic(np.concatenate(tasks)) < ours[1]


def test_the_stacked_resamples_give_the_one_at_a_time_interval_exactly():
    """stratified_interval evaluates the statistic on all resamples at once (one row each); a loop drawing and
    scoring one resample at a time, with the same generator, gives the same interval to the last bit."""
    rng = np.random.default_rng(3)
    tasks = [np.round(np.abs(rng.normal(0.3, 0.2, n)), 2) for n in (30, 12, 1, 7)]     # ties, a one-trial task
    for statistic in (np.mean, iqm):
        draws = np.random.default_rng(5)
        values = [statistic(np.concatenate([g[draws.integers(0, len(g), len(g))] for g in tasks]))
                  for _ in range(BOOTSTRAP_RESAMPLES)]
        tail = (1 - 0.95) / 2 * 100
        assert stratified_interval(tasks, statistic, seed=5) == (np.percentile(values, tail),
                                                                 np.percentile(values, 100 - tail))
