"""Asynchronous successive halving (ASHA, Li et al., 2020) and asynchronous Hyperband over epochs.

Rung levels: r, r*eta, r*eta^2, ... below R, then R (grace r = 1, eta = 3, R = 50: 1, 3, 9, 27, 50
epochs; the last rung is R itself, as syne-tune's `rung_levels + [max_t]`). A free worker asks for a
job (Li et al. 2020, Algorithm 2, `get_job`): from the highest rung down, the best result of rung k
that is not yet promoted is promoted if it ranks among the top floor(n_k / eta) of the n_k results in
rung k; it continues from its checkpoint to the next rung's epochs. If nothing is promotable, a new
architecture (uniformly at random, without replacement over the trial) starts at the bracket's first
rung. Ranking is by the validation log-perplexity at the rung's epochs; a run that diverged or
stopped before the rung (or a non-finite loss) ranks last and is never promoted; ties keep the order
in which results arrived. Nobody waits: no rung barrier, so workers are idle only when nothing is
promotable and every architecture has been started.

Asynchronous Hyperband (`ahb`, syne-tune's `HyperbandScheduler(type="promotion", brackets=B)`): B
brackets, bracket s running ASHA on the rungs from level s up (grace r*eta^s). Each new architecture
joins a bracket drawn at random with syne-tune's default distribution, probability proportional to
L / ((L - s) * level_s) with L the number of rung levels including R (the share of synchronous
Hyperband's slots per bracket); promotions are looked for in bracket 0 first, then 1, and so on.
B = 4 by default: s_max + 1 with s_max = floor(log_eta(R / r)) = 3, Li et al.'s brackets s = 0..s_max.
"""
import math
from bisect import bisect_left, insort
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs


def rung_levels(grace_epochs: int, eta: int, max_epochs: int) -> list[int]:
    """Epochs of each rung: grace * eta^k while below max_epochs, then max_epochs."""
    if not (1 <= grace_epochs <= max_epochs and eta >= 2):
        raise UserError(f"asha needs 1 <= grace_epochs <= max_epochs and eta >= 2, got grace_epochs="
                        f"{grace_epochs}, max_epochs={max_epochs}, eta={eta}")
    levels, epochs = [], grace_epochs
    while epochs < max_epochs:
        levels.append(epochs)
        epochs *= eta
    return levels + [max_epochs]


def bracket_probabilities(levels: list[int], brackets: int) -> np.ndarray:
    """syne-tune's DefaultHyperbandBracketDistribution over brackets 0..brackets-1."""
    total = len(levels)
    weights = np.array([total / ((total - s) * levels[s]) for s in range(brackets)])
    return weights / weights.sum()


class _Rung:
    """Results at one rung: every key (loss, arrival, row) in rank order, and the finite ones not yet
    promoted, also in rank order."""
    __slots__ = ("epochs", "ranked", "waiting")

    def __init__(self, epochs: int):
        self.epochs = epochs
        self.ranked: list = []
        self.waiting: list = []


class ASHA(Algorithm):
    name = "asha"
    needs = frozenset({"epochs"})
    description = "asynchronous successive halving, R = 50 epochs, eta = 3, grace 1 epoch, promotions from checkpoints"

    @dataclass(frozen=True)
    class Settings:
        max_epochs: int = 50      # R, the top rung (NAS-Bench-NLP's full training)
        eta: int = 3              # reduction factor (Li et al. 2020; syne-tune's default)
        grace_epochs: int = 1     # r, the first rung (syne-tune's grace_period default)
        brackets: int = 1         # 1 = ASHA; more = asynchronous Hyperband

        def __post_init__(self):
            levels = rung_levels(self.grace_epochs, self.eta, self.max_epochs)
            if not 1 <= self.brackets <= len(levels):
                raise UserError(f"asha brackets must be in 1..{len(levels)} (the number of rungs), got {self.brackets}")

    def start(self, inputs: SearchInputs) -> None:
        s = self.settings
        levels = rung_levels(s.grace_epochs, s.eta, s.max_epochs)
        self._eta = s.eta
        self._brackets = [[_Rung(e) for e in levels[b:]] for b in range(s.brackets)]
        self._probabilities = bracket_probabilities(levels, s.brackets) if s.brackets > 1 else None
        self._rng = inputs.rng
        self._order = iter(inputs.rng.permutation(inputs.search.n).tolist())
        self._place: dict[int, tuple[int, int]] = {}   # row -> (bracket, rung) of its latest job
        self._arrivals = 0
        # Kept for inspection (tests): every job handed out as (row, bracket, rung, promoted?).
        self.decisions: list = []

    def ask(self) -> Job | None:
        eta = self._eta
        for b, rungs in enumerate(self._brackets):
            for k in range(len(rungs) - 2, -1, -1):
                rung = rungs[k]
                waiting = rung.waiting
                if waiting and bisect_left(rung.ranked, waiting[0]) < len(rung.ranked) // eta:
                    row = waiting.pop(0)[2]
                    self._place[row] = (b, k + 1)
                    self.decisions.append((row, b, k + 1, True))
                    return Job(row, rungs[k + 1].epochs)
        return self._start_new()

    def _start_new(self) -> Job | None:
        """A new architecture (`_new_row`) at its bracket's (`_new_bracket`) first rung, or None."""
        row = self._new_row()
        if row is None:
            return None
        b = self._new_bracket()
        self._place[row] = (b, 0)
        self.decisions.append((row, b, 0, False))
        return Job(row, self._brackets[b][0].epochs)

    def _new_row(self) -> int | None:
        """The next architecture of the trial's permutation, or None when every one has started."""
        return next(self._order, None)

    def _new_bracket(self) -> int:
        """The bracket a new architecture joins: drawn with `bracket_probabilities` (0 for plain ASHA)."""
        return 0 if self._probabilities is None else int(self._rng.choice(len(self._brackets), p=self._probabilities))

    def tell(self, job: Job, observation) -> None:
        b, k = self._place[job.arch]
        rungs = self._brackets[b]
        rung = rungs[k]
        loss = observation.last_val_loss if observation.status == "OK" and observation.epochs == rung.epochs \
            else math.inf
        if not math.isfinite(loss):
            loss = math.inf
        key = (loss, self._arrivals, job.arch)
        self._arrivals += 1
        insort(rung.ranked, key)
        if k < len(rungs) - 1 and loss < math.inf:
            insort(rung.waiting, key)


class AsyncHyperband(ASHA):
    name = "ahb"
    description = "asynchronous Hyperband: ASHA in 4 brackets (grace 1, 3, 9, 27 epochs) drawn as syne-tune does"

    @dataclass(frozen=True)
    class Settings(ASHA.Settings):
        brackets: int = 4         # s_max + 1 = floor(log_3 50) + 1 (Li et al. 2020)
