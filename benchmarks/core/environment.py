"""The simulated training environment of one trial: checkpoints, incumbent and history.

Training row `arch` from k to E epochs charges the recorded wall time of epochs k+1..E
(`sum(wall_time_s[k:E])`, seconds) and reveals the validation and train losses of those epochs only.
Unlike the upstream reference code, which charges `sum(wall_times[:E])` but shows losses at index E,
training to E epochs shows epochs 1..E and nothing more. A run that diverged (its log stops early)
trains to where it stopped, is charged only those epochs, and reports its failure status.

Two ways to drive it: `continuation` (what a job would cost, nothing changes) and `record` (a job
ended at a given simulated time: checkpoint, incumbent and history are updated), which the harness's
event-driven simulator uses for K workers; or `train` / `spend`, one worker in a plain loop.

The environment holds a `SearchTable`, which has no test losses: what an optimizer can reach through
it is what a searcher would see. Regret is computed on the harness side from `history`.
"""
import math
import threading
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.core.table import SearchTable


class BudgetExhausted(Exception):
    """A `train` call would end after the simulated budget; it was not charged nor recorded."""


@dataclass(slots=True)
class Observation:
    """What a searcher learns from one `train` call. Losses are log-perplexities of epochs
    `from_epoch + 1 .. epochs` (1-based); `cost_s` is the simulated seconds charged."""
    arch: int                 # row index
    recepie_id: int
    from_epoch: int
    epochs: int               # epochs reached after the call
    requested_epochs: int
    val_loss: np.ndarray
    train_loss: np.ndarray
    status: str               # 'OK' while training is fine, else the log's failure status
    cost_s: float
    time_s: float             # simulated time after the call
    # multi-objective runs: every objective the searcher may see for this architecture now, natural
    # direction (the loss objective: validation at `epochs`; GLUE points on bert), else None
    objectives: dict | None = None

    @property
    def diverged(self) -> bool:
        return self.status != "OK"

    @property
    def last_val_loss(self) -> float:
        """Validation log-perplexity at `epochs` (NaN if not finite or not trained)."""
        return float(self.val_loss[-1]) if len(self.val_loss) else math.nan


@dataclass(slots=True)
class History:
    """One entry per finished job (`train` call), in order of end time, as parallel lists (the
    harness reads it for regret and for the job log)."""
    time_s: list              # simulated seconds when the job ended
    arch: list                # row index trained
    epochs: list              # epochs reached by that architecture
    incumbent: list           # row index of the best-by-validation (arch, epoch), -1 if none yet
    incumbent_epoch: list     # its epoch (1-based), 0 if none
    start_s: list             # simulated seconds when a worker took the job (before its overhead)
    worker: list              # the worker that ran it (0..K-1)
    from_epoch: list          # the checkpoint it continued from
    overhead_s: list          # seconds of non-training work charged before the training

    @classmethod
    def empty(cls) -> "History":
        return cls([], [], [], [], [], [], [], [], [])


class Environment:
    """Simulated training over a benchmark's searcher view, with a budget in simulated seconds."""

    def __init__(self, search: SearchTable, budget_s: float = math.inf, objectives: tuple = ()):
        self.search = search
        self.budget_s = float(budget_s)
        self.time_s = 0.0
        self.stopped_at_best_s = None           # set by the simulator when it ended the trial at the table's best
        self._trained = [0] * search.n          # epochs trained per row (plain ints: fast scalar access)
        self._n, self._max_epochs = search.n, search.max_epochs
        self._logged = search.n_epochs.tolist()
        self._ids = search.ids.tolist()
        self._ok = (search.status == "OK").tolist()
        self.history = History.empty()
        self._incumbent = (math.inf, -1, 0)   # (val_loss, row, epoch), ties broken by (row, epoch)
        self._index = _prefix_index(search)
        self._objectives = _objective_columns(search, objectives)

    # -- what a searcher may ask -------------------------------------------------------------------
    @property
    def epochs_trained(self) -> np.ndarray:
        """Epochs trained so far per row [n] (a copy)."""
        return np.array(self._trained, dtype=np.int64)

    @property
    def remaining_s(self) -> float:
        return self.budget_s - self.time_s

    @property
    def incumbent(self) -> tuple[int, int] | None:
        """(row index, epoch) with the lowest finite validation loss observed so far, or None."""
        return None if self._incumbent[1] < 0 else (self._incumbent[1], self._incumbent[2])

    @property
    def incumbent_val_loss(self) -> float:
        return self._incumbent[0]

    def best_possible(self) -> tuple[float, int, int] | None:
        """(validation loss, row, epoch) of the incumbent once every row has been trained to the end of its
        log: the table's lowest finite validation loss (ties: the lowest row, then its first such epoch);
        None if the table has no finite validation loss. No job can replace an incumbent equal to it."""
        index = self._index
        width = index.prefix_best_val.shape[1] - 1
        best = index.prefix_best_val[:, width]
        if not np.isfinite(best).any():
            return None
        row = int(np.argmin(best))          # the first (lowest) row on ties, as `record` breaks them
        return float(best[row]), row, int(index.prefix_best_epoch[row, width])

    @property
    def incumbent_key(self) -> tuple[float, int, int]:
        """(validation loss, row, epoch) of the incumbent, comparable with `best_possible()`;
        (inf, -1, 0) before the first finite validation loss."""
        return self._incumbent

    def cost_s(self, arch: int, epochs: int) -> float:
        """Simulated seconds that `train(arch, epochs)` would charge now."""
        return float(self.continuation(arch, epochs)[2])

    def continuation(self, arch: int, epochs: int) -> tuple[int, int, float]:
        """(from_epoch, reached, cost_s) of training row `arch` up to `epochs` from its checkpoint now:
        it reaches min(epochs, epochs logged), at least its checkpoint; nothing changes."""
        if type(arch) is not int or not 0 <= arch < self._n:
            arch = self.search.check_index(arch)
        if type(epochs) is not int or not 1 <= epochs <= self._max_epochs:
            epochs = self._check_epochs(epochs)
        start = self._trained[arch]
        reached = max(start, min(epochs, self._logged[arch]))
        cum = self._index.cum_time_s
        return start, reached, cum.item(arch, reached) - cum.item(arch, start)

    def record(self, arch: int, epochs: int, start: int, reached: int, cost_s: float, end_s: float,
               start_s: float, worker: int = 0, overhead_s: float = 0.0) -> Observation:
        """A job that trained `arch` from epoch `start` to `reached` (asked: `epochs`) ended at simulated
        time `end_s`: move its checkpoint, update the incumbent, add a history point; its observation."""
        self._trained[arch] = reached
        if reached > start:
            best_val = self._index.prefix_best_val.item(arch, reached)
            if best_val <= self._incumbent[0]:
                candidate = (best_val, arch, self._index.prefix_best_epoch.item(arch, reached))
                if candidate < self._incumbent:
                    self._incumbent = candidate
        logged = self._logged[arch]
        failed = epochs > logged or (reached == logged and not self._ok[arch])
        status = str(self.search.status[arch]) if failed else "OK"
        if failed and status == "OK":   # an OK log with fewer epochs than asked: it stopped early
            status = "stopped early"
        history = self.history
        history.time_s.append(end_s)
        history.arch.append(arch)
        history.epochs.append(reached)
        history.incumbent.append(self._incumbent[1])
        history.incumbent_epoch.append(self._incumbent[2])
        history.start_s.append(start_s)
        history.worker.append(worker)
        history.from_epoch.append(start)
        history.overhead_s.append(overhead_s)
        observation = Observation(arch, self._ids[arch], start, reached, epochs,
                                  self.search.val_loss[arch, start:reached], self.search.train_loss[arch, start:reached],
                                  status, cost_s, end_s)
        if self._objectives:
            observation.objectives = self._observed_objectives(arch, reached)
        return observation

    def _observed_objectives(self, arch: int, reached: int) -> dict:
        """Objective values of `arch` a searcher has after training it to `reached` epochs."""
        values = {}
        for name, column, sign in self._objectives:
            if column is None:       # the loss objective, at the epoch reached (GLUE points on bert: -loss)
                loss = float(self.search.val_loss[arch, reached - 1]) if reached > 0 else math.nan
                values[name] = sign * loss
            else:
                values[name] = float(column[arch]) if reached > 0 else math.nan
        return values

    def train(self, arch: int, epochs: int) -> Observation:
        """One worker: train row `arch` up to `epochs` epochs (from its checkpoint) now; raises
        BudgetExhausted if the call would end after the budget (then nothing is charged or recorded)."""
        start, reached, cost = self.continuation(arch, epochs)
        if self.time_s + cost > self.budget_s:
            raise BudgetExhausted(f"training {self.search.ids[arch]} to {epochs} epochs needs {cost:.0f} s, "
                                  f"{self.remaining_s:.0f} s left")
        began = self.time_s
        self.time_s += cost
        return self.record(int(arch), int(epochs), start, reached, cost, self.time_s, began)

    def spend(self, cost_s: float) -> None:
        """Charge `cost_s` simulated seconds of work that is not training (e.g. scoring a cell with a
        training-free metric); BudgetExhausted, with nothing charged, if it would end after the budget.
        It adds no trajectory point: the next `train` call's time includes it."""
        if not cost_s >= 0:
            raise ValueError(f"cost_s must be >= 0, got {cost_s}")
        if self.time_s + cost_s > self.budget_s:
            raise BudgetExhausted(f"{cost_s:.0f} s of work does not fit in the {self.remaining_s:.0f} s left")
        self.time_s += cost_s

    def train_id(self, recepie_id: int, epochs: int) -> Observation:
        """`train` addressed by recepie_id."""
        return self.train(self.search.index_of(recepie_id), epochs)

    def _check_epochs(self, epochs) -> int:
        if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) \
                or not 1 <= epochs <= self.search.max_epochs:
            raise UserError(f"epochs must be an integer in 1..{self.search.max_epochs}, got {epochs!r}")
        return int(epochs)


def _objective_columns(search: SearchTable, objectives) -> list:
    """[(name, per-architecture values or None for the loss objective, sign of the loss)] of a
    multi-objective run (the losses are minimised: a maximised loss objective is their negative)."""
    if not objectives:
        return []
    from benchmarks.core.objectives import OBJECTIVES, architecture_values, loss_objective

    loss = loss_objective(search.name)
    return [(name, None if name == loss else architecture_values(search, name), -1.0 if OBJECTIVES[name].maximise else 1.0)
            for name in objectives]


@dataclass(frozen=True)
class _PrefixIndex:
    cum_time_s: np.ndarray          # [n, E+1]: seconds to train epochs 1..e
    prefix_best_val: np.ndarray     # [n, E+1]: lowest finite val loss among epochs 1..e (inf if none)
    prefix_best_epoch: np.ndarray   # [n, E+1]: its epoch (first one on ties)


# (id of val_loss, id of wall_time_s) -> (val_loss, wall_time_s, index): the prefix index of the tables last
# used here, shared by every view of the same arrays (a trial's, a test's stand-in); a few at most, so a
# process that makes a new view per trial holds one index, not one per trial (17 MB each on ptb)
_PREFIX_CACHE: dict = {}
_PREFIX_CACHE_SIZE = 4
_PREFIX_LOCK = threading.Lock()        # trials may run in threads (a Dask worker's)


def _prefix_index(search: SearchTable) -> _PrefixIndex:
    """Prefix sums of wall time and prefix minima of validation loss, computed once per pair of arrays."""
    val_loss, wall_time_s = search.val_loss, search.wall_time_s
    key = (id(val_loss), id(wall_time_s))
    with _PREFIX_LOCK:
        cached = _PREFIX_CACHE.pop(key, None)
        if cached is not None and cached[0] is val_loss and cached[1] is wall_time_s:
            _PREFIX_CACHE[key] = cached               # the most recently used last
            return cached[2]
    index = _compute_prefix_index(val_loss, wall_time_s)
    with _PREFIX_LOCK:
        _PREFIX_CACHE[key] = (val_loss, wall_time_s, index)
        while len(_PREFIX_CACHE) > _PREFIX_CACHE_SIZE:
            del _PREFIX_CACHE[next(iter(_PREFIX_CACHE))]
    return index


def _compute_prefix_index(val_loss: np.ndarray, wall_time_s: np.ndarray) -> _PrefixIndex:
    n, width = val_loss.shape
    cum = np.zeros((n, width + 1))
    cum[:, 1:] = np.cumsum(np.nan_to_num(wall_time_s, nan=0.0), axis=1)
    val = np.where(np.isfinite(val_loss), val_loss, np.inf)
    best = np.full((n, width + 1), np.inf)
    best[:, 1:] = np.minimum.accumulate(val, axis=1)
    epoch_of_min = np.zeros((n, width + 1), dtype=np.int64)
    current = np.zeros(n, dtype=np.int64)
    running = np.full(n, np.inf)
    for e in range(1, width + 1):
        improved = val[:, e - 1] < running
        running = np.where(improved, val[:, e - 1], running)
        current = np.where(improved, e, current)
        epoch_of_min[:, e] = current
    from benchmarks.core.table import immutable

    return _PrefixIndex(immutable(cum), immutable(best), immutable(epoch_of_min))   # no trial can change them
