"""syne-tune's BORE searcher with its acquisition scored in one batch: the same suggestions, in a fraction
of the CPU.

syne-tune 0.16's `Bore.suggest` (the default random-search acquisition, `acq_optimizer="rs"`) draws
`feval_acq` (500) distinct random configurations and asks its XGBoost classifier for each one's
probability separately, a `predict_proba` call per row, and checks each draw against every earlier one
with a list search. `st-bore` asks it once per evaluation and `st-asha-bore` (whose multi-fidelity
wrapper builds a new searcher on every result so far) once per new configuration, so on ptb at 1000 h
the per-row calls were over half of a trial's CPU (py-spy).

`BatchedBore.suggest` draws the same configurations in the same order from the same generators,
drops repeats with a set of their items (the same equality as the list search: the configurations
are dicts of numbers with their keys in one order), and scores them in one `predict_proba` call.
XGBoost's prediction of a row does not depend on the other rows of its batch (each row's trees are
summed in tree order; tests/test_synetune_bore.py checks that the batch equals the single rows bit
for bit) and draws no random numbers, so the chosen configuration, and every trajectory, are the
library's. The other acquisition optimizers ("de", "rs_with_replacement") are left to the library.

What was left after that, at 1000 h on ptb, was a third the library's encoding of configurations (a NumPy
`clip` per value, for every result so far at each refit) and a third the classifier's fit: the
encoding is now `LinearBoxEncoding` (the same numbers in plain float arithmetic), the fit is the
algorithm's own.
"""
from __future__ import annotations

import functools

import numpy as np


@functools.cache
def batched_bore_class():
    """The `Bore` subclass (defined on first use, so that importing this module loads no syne-tune)."""
    from syne_tune.optimizer.schedulers.searchers.bore import Bore

    class BatchedBore(Bore):
        """syne-tune's `Bore` whose random-search acquisition scores its candidates in one batch."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._hp_ranges = box_encoding(self._hp_ranges)

        def suggest(self, **kwargs):
            if self.acq_optimizer != "rs":
                return super().suggest(**kwargs)
            config = self._next_points_to_evaluate()
            if config is not None:
                return config
            if len(self.inputs) < self.init_random or self.random_state.rand() < self.random_prob:
                return self._get_random_config()
            if not self._train_model(self.inputs, self.targets):
                return self._get_random_config()
            candidates = distinct_draws(self._get_random_config, self.feval_acq)
            values = self._loss(np.array([self._hp_ranges.to_ndarray(c) for c in candidates]))
            return candidates[int(np.argmin(values))]

    return BatchedBore


def distinct_draws(draw, wanted: int, patience: int = 10000) -> list[dict]:
    """Up to `wanted` distinct configurations from `draw()`, in the order drawn, giving up after
    `patience` repeats in a row (as syne-tune's `Bore.suggest` does)."""
    candidates: list[dict] = []
    seen: set = set()
    misses = 0
    while len(candidates) < wanted:
        config = draw()
        misses += 1
        if misses > patience:
            break
        key = tuple(config.items())
        if key in seen:
            continue
        misses = 0
        seen.add(key)
        candidates.append(config)
    return candidates


class LinearBoxEncoding:
    """syne-tune's encoding of a configuration (`to_ndarray`: each value mapped to [0, 1] by its range) for
    a box of linear continuous ranges, what the adapter's spaces are, in plain float arithmetic: the
    library's own numbers (the same IEEE operations, without a NumPy call per value) at a tenth of the
    CPU. Everything else is the library's `HyperparameterRanges`."""

    def __init__(self, ranges):
        from syne_tune.optimizer.schedulers.searchers.utils.hp_ranges_impl import EPS

        self._ranges = ranges
        self._eps = EPS
        self._bounds = [(name, r.lower_bound, r.upper_bound, r.lower_internal, r.upper_internal)
                        for name, r in zip(ranges.internal_keys, ranges._hp_ranges)]

    def __getattr__(self, name):
        return getattr(self._ranges, name)

    def to_ndarray(self, config: dict) -> np.ndarray:
        encoded = []
        for name, lower_bound, upper_bound, lower, upper in self._bounds:
            value = config[name]
            if not lower_bound - self._eps <= value <= upper_bound + self._eps:
                raise AssertionError((value, self._ranges))
            if upper == lower:
                encoded.append(0.0)          # a fixed dimension
            else:
                unit = (value - lower) / (upper - lower)
                encoded.append(0.0 if unit < 0.0 else 1.0 if unit > 1.0 else unit)
        return np.array(encoded)


def box_encoding(ranges):
    """`ranges` as a `LinearBoxEncoding` when every range is linear and continuous, else `ranges`."""
    from syne_tune.optimizer.schedulers.searchers.utils.hp_ranges_impl import HyperparameterRangeContinuous
    from syne_tune.optimizer.schedulers.searchers.utils.scaling import LinearScaling

    parts = getattr(ranges, "_hp_ranges", None)
    if parts is None or ranges.name_last_pos is not None or not all(
            type(r) is HyperparameterRangeContinuous and type(r.scaling) is LinearScaling for r in parts):
        return ranges
    return LinearBoxEncoding(ranges)


def use_batched_bore(scheduler) -> None:
    """Make `scheduler`'s BORE searcher (syne-tune's `BORE`, or the per-rung one of `ASHABORE`) batched."""
    from syne_tune.optimizer.schedulers.searchers.bore import Bore

    batched = batched_bore_class()
    searcher = scheduler.searcher
    if type(searcher) is Bore:                              # BORE: the searcher itself
        searcher.__class__ = batched
        searcher._hp_ranges = box_encoding(searcher._hp_ranges)
    elif getattr(searcher, "searcher_cls", None) is Bore:   # ASHABORE: a new one on every result so far
        searcher.searcher_cls = batched
    else:
        raise TypeError(f"no BORE searcher in {type(scheduler).__name__}")
