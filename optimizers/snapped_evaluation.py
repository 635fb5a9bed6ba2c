"""Evaluate points of a feature box as architectures: the shared loop body of TPE and SMAC.

A proposed vector is snapped to the nearest architecture by cosine distance (`snapping`), trained
`epochs` epochs, and scored by its validation log-perplexity at `epochs`, or `penalty` when the run
diverged (status not OK, or no finite loss there). An architecture trained before scores its known
value again and trains nothing (a cached model costs no time). With `new_only`, proposals snap to
the nearest untrained architecture instead, so that every one trains something.
"""
import logging
import math
from contextlib import contextmanager

import numpy as np

from benchmarks.environment import Environment
from benchmarks.errors import UserError
from optimizers.snapping import nearest_by_cosine, unit_rows


class SpaceUsedUp(Exception):
    """No proposal can reach a new architecture any more: every one is trained (`new_only`), or
    `max_repeats` proposals in a row landed on known ones."""


class SnappedEvaluator:
    """Turns proposed vectors into trained architectures and their objective (log-perplexity).

    Kept for inspection (tests): `vectors`, `proposals` (snapped rows) and `losses`, in order.
    """

    def __init__(self, env: Environment, features: np.ndarray, epochs: int, penalty: float,
                 max_repeats: int, new_only: bool):
        unit_rows(features)                     # normalise once, before the loop
        self.env, self.features = env, features
        self.epochs, self.penalty = int(epochs), float(penalty)
        self.max_repeats, self.new_only = int(max_repeats), bool(new_only)
        self.trained = np.zeros(env.search.n, dtype=bool)
        self.objective_of: dict[int, float] = {}
        self.vectors: list[np.ndarray] = []
        self.proposals: list[int] = []
        self.losses: list[float] = []
        self.repeats = 0

    @classmethod
    def for_algorithm(cls, algorithm, inputs) -> "SnappedEvaluator":
        """An evaluator with `algorithm.settings` (epochs, penalty, max_repeats, new_only) whose
        record lists are also exposed as `algorithm.vectors`, `.proposals` and `.losses`; a missing or
        misshapen feature matrix is a UserError."""
        n = inputs.env.search.n
        if inputs.features is None or inputs.features.shape[0] != n:
            raise UserError(f"{algorithm.name} needs a feature matrix with one row per architecture "
                            "(setting 'features')")
        s = algorithm.settings
        evaluator = cls(inputs.env, inputs.features, s.epochs, s.penalty, s.max_repeats, s.new_only)
        algorithm.vectors, algorithm.proposals, algorithm.losses = \
            evaluator.vectors, evaluator.proposals, evaluator.losses
        return evaluator

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-dimension minimum and maximum [d] of the features over all architectures."""
        return self.features.min(axis=0).astype(float), self.features.max(axis=0).astype(float)

    def __call__(self, vector: np.ndarray) -> float:
        """The objective of the architecture nearest to `vector`; raises SpaceUsedUp (see above)
        and the environment's BudgetExhausted."""
        if self.new_only and self.trained.all():
            raise SpaceUsedUp
        row = nearest_by_cosine(self.features, vector, exclude=self.trained if self.new_only else None)
        self.vectors.append(vector)
        self.proposals.append(row)
        if row in self.objective_of:
            self.repeats += 1
            if self.repeats >= self.max_repeats:
                raise SpaceUsedUp
        else:
            self.repeats = 0
            obs = self.env.train(row, self.epochs)
            loss = obs.last_val_loss
            ok = obs.status == "OK" and obs.epochs == self.epochs and math.isfinite(loss)
            self.objective_of[row] = loss if ok else self.penalty
            self.trained[row] = True
        self.losses.append(self.objective_of[row])
        return self.objective_of[row]


@contextmanager
def quiet_logger(name: str):
    """Silence a library's logger (and its children) for the duration of a trial."""
    logger = logging.getLogger(name)
    level, disabled = logger.level, logger.disabled
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)
        logger.disabled = disabled
