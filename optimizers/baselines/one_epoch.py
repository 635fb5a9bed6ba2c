"""The one-epoch top-K baseline ("Is One Epoch All You Need?", Egele et al., 2023): train `screen`
random architectures for one epoch, continue the `keep` best of them (by validation loss after that
epoch) to the full fidelity, and repeat with the next `screen` architectures while budget remains.

Rounds follow one random permutation of the table (no architecture is drawn twice). With K workers a
free worker takes, in order: a continuation of a round whose one-epoch results are all in, else the
next one-epoch job of the current round, else nothing until a running job ends (so the K workers screen
side by side and a round's best are chosen from the whole round). A diverged architecture (no finite
loss after one epoch) is never continued. Defaults (27 screened, 3 kept: the size of Hyperband's most
aggressive bracket at R = 50, eta = 3, and its survivors after one halving to 3 of 27 at the third rung)
were set before any run, not tuned.
"""
import math
from collections import deque
from dataclasses import dataclass

from optimizers.base import Algorithm, Job, SearchInputs
from benchmarks.core.errors import UserError


class OneEpochTopK(Algorithm):
    full_fidelity_setting = "max_epochs"   # continued to the benchmark's full fidelity (make_algorithm sets it)
    name = "top1e"
    description = ("one-epoch top-K: 27 random architectures trained 1 epoch, the best 3 continued to the full "
                   "fidelity, repeated (Egele et al. 2023)")
    needs = frozenset({"epochs"})

    @dataclass(frozen=True)
    class Settings:
        screen: int = 27          # architectures trained one epoch per round
        keep: int = 3             # of them, continued to max_epochs
        max_epochs: int = 50      # the full fidelity (the benchmark's: make_algorithm sets it)

        def __post_init__(self):
            if not (1 <= self.keep <= self.screen):
                raise UserError(f"top1e needs 1 <= keep <= screen, got keep={self.keep}, screen={self.screen}")
            if self.max_epochs < 2:
                raise UserError(f"top1e needs max_epochs >= 2 (one epoch to screen, more to continue), "
                                f"got {self.max_epochs}")

    def start(self, inputs: SearchInputs) -> None:
        self._order = iter(inputs.rng.permutation(inputs.search.n).tolist())
        self._round: list = []             # (loss after one epoch, arrival, arch) of the current round's results
        self._to_screen = 0                # one-epoch jobs of the current round not yet handed out
        self._pending = 0                  # one-epoch jobs of the current round still running
        self._continue: deque = deque()    # architectures chosen to go on to max_epochs
        self._arrivals = 0
        self._new_round()

    def _new_round(self) -> None:
        self._round, self._to_screen, self._pending = [], self.settings.screen, 0

    def ask(self) -> Job | None:
        if self._continue:
            return Job(self._continue.popleft(), self.settings.max_epochs)
        if self._to_screen == 0 and self._pending == 0:       # the round is over: the next one
            self._new_round()
        if self._to_screen > 0:
            row = next(self._order, None)
            if row is None:
                self._to_screen = 0
                return None
            self._to_screen -= 1
            self._pending += 1
            return Job(row, 1)
        return None

    def tell(self, job: Job, observation) -> None:
        if job.epochs != 1:
            return
        self._pending -= 1
        loss = observation.last_val_loss if observation.status == "OK" else math.inf
        self._round.append((loss if math.isfinite(loss) else math.inf, self._arrivals, job.arch))
        self._arrivals += 1
        if self._to_screen == 0 and self._pending == 0:        # every one-epoch result of the round is in
            best = sorted(self._round)[:self.settings.keep]
            self._continue.extend(arch for loss, _, arch in best if math.isfinite(loss))
