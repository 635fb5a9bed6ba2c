"""The freeze-thaw loop DyHPO and FT-PFN share: architectures started at random, then each free worker
trains the candidate a model scores highest `step_epochs` further from its checkpoint.

Candidates: every started architecture that is not finished, running or diverged (at its next epoch),
and `pool` unseen ones drawn from a random order of the table (those drawn and not chosen stay
candidates). A subclass implements `_scores(rows)` (higher is better) and may implement `_ready()`
(False: the model cannot score yet, start a random architecture).
"""
import math

import numpy as np

from optimizers.base import Algorithm, Job, SearchInputs


class FreezeThawSearch(Algorithm):
    """Base class; subclasses' Settings have `initial`, `step_epochs`, `pool` and `max_epochs`."""

    def _begin(self, inputs: SearchInputs) -> None:
        n, top = inputs.search.n, self.settings.max_epochs
        self._order = iter(inputs.rng.permutation(n).tolist())
        self._curves = np.full((n, top), np.nan)             # validation losses paid for (NaN: not, or not finite)
        self._trained = np.zeros(n, dtype=np.int64)          # epochs paid for
        self._done = np.zeros(n, dtype=bool)                 # finished, diverged or its log ended
        self._last_told = np.zeros(n, dtype=np.int64)        # when each architecture last reported
        self._running: set = set()
        self._fresh: list = []                               # unseen candidates drawn, not yet started
        self._results = 0

    def _scores(self, rows: np.ndarray) -> np.ndarray:
        """The acquisition value of training each of `rows` one step further (higher is better)."""
        raise NotImplementedError

    def _ready(self) -> bool:
        """Whether the model can score candidates now (called once per decision, after the initial ones)."""
        return True

    def _next_epochs(self, rows: np.ndarray) -> np.ndarray:
        return np.minimum(self._trained[rows] + self.settings.step_epochs, self.settings.max_epochs)

    def ask(self) -> Job | None:
        s = self.settings
        started = int((self._trained > 0).sum()) + sum(1 for r in self._running if self._trained[r] == 0)
        if started < s.initial or self._results == 0 or not self._ready():
            return self._start(next(self._order, None))
        going = np.flatnonzero((self._trained > 0) & ~self._done)
        going = going[[r not in self._running for r in going]] if self._running else going
        while len(self._fresh) < s.pool:                     # top the unseen candidates up to `pool`
            row = next(self._order, None)
            if row is None:
                break
            self._fresh.append(row)
        rows = np.array(list(going) + self._fresh, dtype=np.int64)
        if not len(rows):
            return None
        k = int(np.argmax(self._scores(rows)))
        row = int(rows[k])
        if self._trained[row] == 0:
            self._fresh.remove(row)
            return self._start(row)
        self._running.add(row)
        return Job(row, int(self._next_epochs(rows[k:k + 1])[0]))

    def _start(self, row) -> Job | None:
        """Train a new architecture its first `step_epochs`."""
        if row is None:
            return None
        self._running.add(row)
        return Job(row, min(self.settings.step_epochs, self.settings.max_epochs))

    def _observed(self, row: int, epoch: int, value: float) -> None:
        """A finite validation loss paid for (1-based `epoch`), after it is stored."""

    def tell(self, job: Job, observation) -> None:
        row = job.arch
        self._running.discard(row)
        for k, value in enumerate(observation.val_loss, start=observation.from_epoch + 1):
            value = float(value)
            if k <= self.settings.max_epochs and math.isfinite(value):
                self._curves[row, k - 1] = value
                self._observed(row, k, value)
        self._trained[row] = observation.epochs
        self._results += 1
        self._last_told[row] = self._results
        last = self._curves[row, observation.epochs - 1] if observation.epochs > 0 else math.nan
        if observation.status != "OK" or observation.epochs >= self.settings.max_epochs \
                or observation.epochs < job.epochs or not math.isfinite(last):
            self._done[row] = True
