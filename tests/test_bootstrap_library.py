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
    theirs = bootstrap(tuple(tasks), lambda *groups: statistic(np.concatenate(groups)), vectorized=False,
                       n_resamples=4000, method="percentile", random_state=np.random.default_rng(1))
    tolerance = 0.3 * theirs.standard_error
    assert BOOTSTRAP_RESAMPLES == 2000
    assert ours[0] == pytest.approx(theirs.confidence_interval.low, abs=tolerance)
    assert ours[1] == pytest.approx(theirs.confidence_interval.high, abs=tolerance)
    assert ours[0] < statistic(np.concatenate(tasks)) < ours[1]
