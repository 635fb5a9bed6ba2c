"""Proposals in a feature box as architectures: the shared step of TPE and SMAC.

A proposed vector is snapped to the nearest architecture by cosine distance (`snapping`), trained
`epochs` epochs, and scored by its validation log-perplexity at `epochs`, or `penalty` when the run
diverged (status not OK, or no finite loss there). An architecture trained before scores its known
value again and trains nothing (a cached model costs no time). With `new_only`, proposals snap to
the nearest untrained architecture instead, so that every one trains something.

With K workers an architecture counts as trained once it is handed to a worker: `new_only` snapping
skips it, and a proposal that snaps onto it while it is still training gets its objective when that
job is told (nothing is trained twice).
"""
import logging
import math
from collections import defaultdict
from contextlib import contextmanager

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Job
from optimizers.snapping import nearest_by_cosine, unit_rows


class SpaceUsedUp(Exception):
    """No proposal can reach a new architecture any more: every one is trained (`new_only`), or
    `max_repeats` proposals in a row landed on known ones."""


class SnappedEvaluator:
    """Turns proposed vectors into jobs, and finished jobs into objectives (log-perplexity).

    Kept for inspection (tests): `vectors` and `proposals` (snapped rows) of every proposal, and
    `losses`, the objectives of the proposals known so far, in proposal order.
    """

    def __init__(self, features: np.ndarray, epochs: int, penalty: float, max_repeats: int, new_only: bool):
        unit_rows(features)                     # normalise once, before the loop
        self.features = features
        self.epochs, self.penalty = int(epochs), float(penalty)
        self.max_repeats, self.new_only = int(max_repeats), bool(new_only)
        self.trained = np.zeros(features.shape[0], dtype=bool)   # handed to a worker
        self.objective_of: dict[int, float] = {}
        self.vectors: list[np.ndarray] = []
        self.proposals: list[int] = []
        self.losses: list[float] = []
        self._loss_of: list = []                 # per proposal: its objective, None while pending
        self._waiting = defaultdict(list)        # row -> proposals waiting for its job
        self.repeats = 0

    @classmethod
    def for_algorithm(cls, algorithm, inputs) -> "SnappedEvaluator":
        """An evaluator with `algorithm.settings` (epochs, penalty, max_repeats, new_only) whose
        record lists are also exposed as `algorithm.vectors`, `.proposals` and `.losses`; a missing or
        misshapen feature matrix is a UserError."""
        n = inputs.search.n
        if inputs.features is None or inputs.features.shape[0] != n:
            raise UserError(f"{algorithm.name} needs a feature matrix with one row per architecture "
                            "(setting 'features')")
        s = algorithm.settings
        evaluator = cls(inputs.features, s.epochs, s.penalty, s.max_repeats, s.new_only)
        algorithm.vectors, algorithm.proposals, algorithm.losses = \
            evaluator.vectors, evaluator.proposals, evaluator.losses
        return evaluator

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-dimension minimum and maximum [d] of the features over all architectures."""
        return self.features.min(axis=0).astype(float), self.features.max(axis=0).astype(float)

    def propose(self, vector: np.ndarray) -> Job | float | None:
        """Snap proposal number `len(proposals)`: a Job for a new architecture, the known objective of
        one trained before, or None if it is still training (its objective comes from `observe`).
        Raises SpaceUsedUp (see above)."""
        if self.new_only and self.trained.all():
            raise SpaceUsedUp
        row = nearest_by_cosine(self.features, vector, exclude=self.trained if self.new_only else None)
        index = len(self.proposals)
        self.vectors.append(vector)
        self.proposals.append(row)
        self._loss_of.append(None)
        if self.trained[row]:
            self.repeats += 1
            if self.repeats >= self.max_repeats:
                raise SpaceUsedUp
            if row in self.objective_of:
                self._resolve(index, self.objective_of[row])
                return self.objective_of[row]
            self._waiting[row].append(index)
            return None
        self.repeats = 0
        self.trained[row] = True
        self._waiting[row].append(index)
        return Job(row, self.epochs)

    def observe(self, job: Job, observation) -> list[tuple[int, float]]:
        """The objective of a finished job: [(proposal index, objective)] of every proposal it answers."""
        loss = observation.last_val_loss
        ok = observation.status == "OK" and observation.epochs == self.epochs and math.isfinite(loss)
        objective = self.objective_of[job.arch] = loss if ok else self.penalty
        answered = self._waiting.pop(job.arch)
        for index in answered:
            self._resolve(index, objective)
        return [(index, objective) for index in answered]

    def _resolve(self, index: int, objective: float) -> None:
        self._loss_of[index] = objective
        losses, known = self.losses, self._loss_of
        while len(losses) < len(known) and known[len(losses)] is not None:
            losses.append(known[len(losses)])


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
