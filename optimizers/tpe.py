"""TPE (hyperopt) over the bounding box of the graph2vec features, as in the NAS-Bench-NLP release (`tpe`).

Each feature dimension is a `hp.uniform` between its minimum and maximum over all architectures. A
proposed vector is snapped to the nearest architecture by cosine distance (over all architectures,
as in the release) and trained `epochs` epochs; the objective is its validation log-perplexity at
`epochs`, or `penalty` if the run diverged (or has no finite loss there). A proposal that snaps to
an architecture trained before scores its known objective again and trains nothing, as in the
release's environment (a cached model costs no time).

hyperopt's `fmin` drives the loop with the release's settings: `tpe.suggest` defaults (20 random
startup trials, 24 EI candidates, gamma 0.25) and `max_queue_len=20` (`queue_len`): proposals are
made in batches of up to 20 from the same history, the pending ones counting as bad points, then
evaluated in order. The environment's `BudgetExhausted` propagates out of `fmin` (hyperopt re-raises
objective exceptions unless told to catch them); the trajectory is what the environment recorded.
`max_repeats` consecutive proposals that train nothing new end the trial (the budget cannot run out
otherwise).
"""
import logging
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import UserError
from optimizers.base import Algorithm, SearchInputs
from optimizers.snapping import nearest_by_cosine, unit_rows


class SpaceUsedUp(Exception):
    """Raised inside the objective to leave `fmin` when proposals stop reaching new architectures."""


class TPE(Algorithm):
    name = "tpe"
    description = "hyperopt TPE over the box of 50-d graph2vec features, snapped to architectures"

    @dataclass(frozen=True)
    class Settings:
        features: str = "g2v-50d"       # our 50-d graph2vec (the paper's 50-d file is not released)
        epochs: int = 50                # epochs each architecture is trained to
        penalty: float = 10.0           # objective of a diverged architecture (log-perplexity units)
        queue_len: int = 20             # hyperopt max_queue_len: proposals per batch (release: 20)
        n_startup_jobs: int = 20        # tpe.suggest default: random proposals before the model
        n_ei_candidates: int = 24       # tpe.suggest default: candidates scored per proposal
        gamma: float = 0.25             # tpe.suggest default: quantile of "good" observations
        max_repeats: int = 2000         # proposals in a row that train nothing new: stop

    def run(self, inputs: SearchInputs) -> None:
        from functools import partial

        from hyperopt import Trials, fmin, hp, tpe

        settings = self.settings
        env, features = inputs.env, inputs.features
        n = env.search.n
        _check(settings, features, n)
        epochs = int(settings.epochs)
        unit_rows(features)                     # normalise once, before the loop
        low, high = features.min(axis=0), features.max(axis=0)
        labels = [f"component_{i}" for i in range(features.shape[1])]
        space = {label: hp.uniform(label, float(lo), float(hi)) for label, lo, hi in zip(labels, low, high)}
        objective_of: dict[int, float] = {}
        # Kept for inspection (tests): every proposal's snapped row, in order.
        self.proposals: list[int] = []
        repeats = 0

        def objective(point: dict) -> float:
            nonlocal repeats
            vector = np.array([point[label] for label in labels])
            row = nearest_by_cosine(features, vector)
            self.proposals.append(row)
            if row in objective_of:
                repeats += 1
                if repeats >= settings.max_repeats:
                    raise SpaceUsedUp
                return objective_of[row]
            repeats = 0
            obs = env.train(row, epochs)
            loss = obs.last_val_loss
            ok = obs.status == "OK" and obs.epochs == epochs and math.isfinite(loss)
            objective_of[row] = loss if ok else float(settings.penalty)
            return objective_of[row]

        algo = partial(tpe.suggest, n_startup_jobs=settings.n_startup_jobs,
                       n_EI_candidates=settings.n_ei_candidates, gamma=settings.gamma)
        with _quiet("hyperopt"):
            try:
                fmin(objective, space, algo=algo, max_evals=2**62, trials=Trials(), rstate=inputs.rng,
                     max_queue_len=settings.queue_len, show_progressbar=False, verbose=False,
                     catch_eval_exceptions=False, return_argmin=False)
            except SpaceUsedUp:
                return


@contextmanager
def _quiet(name: str):
    """Silence a library's logger (hyperopt logs every objective exception as an error)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


def _check(settings, features, n: int) -> None:
    if features is None or features.shape[0] != n:
        raise UserError("tpe needs a feature matrix with one row per architecture (setting 'features')")
    if settings.queue_len < 1 or settings.max_repeats < 1:
        raise UserError("tpe needs queue_len >= 1 and max_repeats >= 1")
