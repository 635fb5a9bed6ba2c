"""syne-tune's kernel-density searcher (`st-kde`, and `st-bohb`'s per-rung one) with its candidates'
truncated-normal draws computed in one batch: the same suggestions, in a fraction of the CPU.

syne-tune 0.16's `KernelDensityEstimator.suggest` draws `num_candidates` (64) candidates around points of
its "good" density, one `scipy.stats.truncnorm.rvs` call per candidate and dimension: each call checks
its arguments, draws one uniform number and maps it through the truncated normal's inverse CDF, so on
ptb (10 dimensions) a suggestion made 640 such calls, over half of an `st-bohb` trial's CPU (py-spy).

`BatchedKDE.suggest` draws the same numbers from the same generator in the same order (per candidate: the
index of its centre, then one uniform number per dimension, as `rvs` draws them) and maps all of them
through the same inverse CDF (`truncnorm._ppf`, what `rvs` calls) in one call, then scales and shifts them
as `rvs` does. The inverse CDF works element by element, so a value does not depend on the others in its
batch (tests/test_synetune_kde.py checks the suggestions against syne-tune's own searcher, bit for bit).
The acquisition (the densities' ratio) and the choice are the library's loop, unchanged. Spaces with
integer or categorical dimensions (not the adapter's, which are boxes of floats) are left to the library.
"""
from __future__ import annotations

import functools

import numpy as np


@functools.cache
def batched_kde_class():
    """The `KernelDensityEstimator` subclass (defined on first use: importing this module loads no
    syne-tune)."""
    from scipy.stats import truncnorm
    from syne_tune.optimizer.schedulers.searchers.kde import KernelDensityEstimator

    class BatchedKDE(KernelDensityEstimator):
        """syne-tune's kernel-density searcher whose candidates are drawn in one batch."""

        def suggest(self, **kwargs):
            if any(vartype != "c" for vartype, _ in self.vartypes):
                return super().suggest(**kwargs)
            suggestion = self._next_points_to_evaluate()
            if suggestion is not None:
                return suggestion
            models = self._train_kde(np.array(self.X), np.array(self.y)) if self.y else None
            if models is None or self.random_state.rand() < self.random_fraction:
                return self._get_random_config()
            self.bad_kde, self.good_kde = models
            centres, uniforms = [], []
            for _ in range(self.num_candidates):        # the library's draws, in its order
                centres.append(self.random_state.randint(0, len(self.good_kde.data)))
                uniforms.append(self.random_state.uniform(size=len(self.vartypes)))
            means = self.good_kde.data[centres]
            widths = self.bandwidth_factor * np.maximum(self.good_kde.bw, self.min_bandwidth)
            lower, upper = -means / widths, (1 - means) / widths
            candidates = truncnorm._ppf(np.array(uniforms), lower, upper) * widths + means
            good, bad = self.good_kde.pdf, self.bad_kde.pdf
            best, suggestion = None, None
            for candidate in candidates:
                value = max(1e-32, bad(candidate)) / max(good(candidate), 1e-32)
                if best is None or best > value:
                    best, suggestion = value, candidate
            if suggestion is None:                      # as the library: no candidate (none asked for)
                return self._get_random_config()
            return self._from_feature(suggestion)

    return BatchedKDE


def use_batched_kde(scheduler) -> None:
    """Make `scheduler`'s kernel-density searcher (syne-tune's `TPE`, or the per-rung one of `BOHB`)
    batched."""
    from syne_tune.optimizer.schedulers.searchers.kde import KernelDensityEstimator

    batched = batched_kde_class()
    searcher = scheduler.searcher
    if type(searcher) is KernelDensityEstimator:                    # TPE: the searcher itself
        searcher.__class__ = batched
    elif getattr(searcher, "searcher_cls", None) is KernelDensityEstimator:   # BOHB: one per result so far
        searcher.searcher_cls = batched
    else:
        raise TypeError(f"no kernel-density searcher in {type(scheduler).__name__}")
