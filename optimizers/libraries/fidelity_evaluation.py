"""Multi-fidelity proposals in a feature box as architectures: the shared step of the library adapters.

A library (Optuna, DEHB, SMAC's multi-fidelity facade) proposes a configuration, a vector in the box
of the graph2vec features, and a budget in epochs. The vector is snapped, once, to the nearest
architecture by cosine distance among those no other configuration holds yet (`new_only` snapping as
`tpe`/`smac`, so every configuration is its own architecture); asking again for the same vector (a
promotion) gives the same architecture. A request (architecture, epochs) then:
- trains it up to `epochs` from its checkpoint (a Job charged only the missing epochs), or
- answers at once, free, if those epochs were already paid for (or the run already diverged), or
- waits, if the architecture is training on another worker, until that job ends.

The objective of (architecture, epochs) is the validation log-perplexity at that epoch, or `penalty`
when the run diverged before it (or the loss is not finite): only epochs the trial paid for are seen.
"""
import math
from collections import defaultdict, deque

import numpy as np

from optimizers.base import Algorithm, Job
from optimizers.snapping import nearest_by_cosine, unit_rows


class FidelityEvaluator:
    """Configurations -> architectures, requests -> jobs, finished jobs -> objectives."""

    def __init__(self, features: np.ndarray, penalty: float):
        unit_rows(features)                        # normalise once, before the loop
        self.features = features
        self.penalty = float(penalty)
        self.assigned = np.zeros(features.shape[0], dtype=bool)
        self._arch_of: dict[bytes, int] = {}       # vector bytes -> row
        self.curves: dict[int, list] = {}          # row -> validation losses of epochs 1..reached
        self.diverged: set = set()                 # rows whose run stopped before its request
        self._running: dict[int, Job] = {}
        self._waiting = defaultdict(list)          # row -> [(token, epochs)] answered when its job ends
        self.ready: deque = deque()                # jobs to hand out (a waiting request needing more epochs)

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-dimension minimum and maximum [d] of the features over all architectures."""
        return self.features.min(axis=0).astype(float), self.features.max(axis=0).astype(float)

    def architecture(self, vector) -> int | None:
        """The architecture of configuration `vector` (the same one each time it is asked), or None when
        every architecture already belongs to another configuration."""
        vector = np.asarray(vector, dtype=np.float64).ravel()
        key = vector.tobytes()
        if key in self._arch_of:
            return self._arch_of[key]
        if self.assigned.all():
            return None
        row = nearest_by_cosine(self.features, vector, exclude=self.assigned)
        self.assigned[row] = True
        self._arch_of[key] = row
        return row

    def request(self, token, row: int, epochs: int) -> Job | float | None:
        """Proposal `token` wants `row` at `epochs`: a Job to run, its objective now (already paid for),
        or None (the architecture is training; `observe` answers it when that job ends)."""
        epochs = int(epochs)
        if row in self._running:
            self._waiting[row].append((token, epochs))
            return None
        if self._known(row, epochs):
            return self.objective(row, epochs)
        job = self._running[row] = Job(row, epochs)
        self._waiting[row].append((token, epochs))
        return job

    def observe(self, job: Job, observation) -> list[tuple[object, float]]:
        """A job ended: [(token, objective)] of every request it answers. A waiting request that needs
        more epochs than the job reached becomes a new job in `ready`."""
        row = job.arch
        del self._running[row]
        curve = self.curves.setdefault(row, [])
        curve.extend(float(v) for v in observation.val_loss)
        if observation.status != "OK":
            self.diverged.add(row)
        answered, more = [], []
        for token, epochs in self._waiting.pop(row):
            if self._known(row, epochs):
                answered.append((token, self.objective(row, epochs)))
            else:
                more.append((token, epochs))
        if more:
            target = max(e for _, e in more)
            self._running[row] = follow_up = Job(row, target)
            self._waiting[row].extend(more)
            self.ready.append(follow_up)
        return answered

    def objective(self, row: int, epochs: int) -> float:
        """Validation log-perplexity of `row` at `epochs`, or `penalty` (diverged before, not finite)."""
        curve = self.curves.get(row, [])
        if len(curve) < epochs:
            return self.penalty
        value = curve[epochs - 1]
        return value if math.isfinite(value) else self.penalty

    def _known(self, row: int, epochs: int) -> bool:
        return len(self.curves.get(row, ())) >= epochs or row in self.diverged


class LibraryAdapter(Algorithm):
    """An ask/tell library whose proposals go through a FidelityEvaluator (DEHB, SMAC-MF).

    Subclasses call `_begin(evaluator)` in `start`, and implement `_propose()` -> (info, vector, epochs)
    (the library's ask: its proposal, the configuration in the feature box, the epochs asked) and
    `_answer(info, value, cost_s)` (the library's tell: objective, seconds charged for it). Proposals
    already paid for are answered at once with cost 0; when one job answers several proposals, the
    first is told its cost and the others 0.
    """

    def _begin(self, evaluator: FidelityEvaluator) -> None:
        self._evaluate = evaluator
        self._asked: dict[int, object] = {}      # token -> the library's proposal
        self._tokens = 0
        self._done = False

    def _propose(self):
        raise NotImplementedError

    def _answer(self, info, value: float, cost_s: float) -> None:
        raise NotImplementedError

    def ask(self) -> Job | None:
        if self._evaluate.ready:
            return self._evaluate.ready.popleft()
        while not self._done:
            info, vector, epochs = self._propose()
            row = self._evaluate.architecture(vector)
            if row is None:                      # every architecture belongs to a configuration
                self._done = True
                return None
            token = self._tokens
            self._tokens += 1
            self._asked[token] = info
            result = self._evaluate.request(token, row, epochs)
            if isinstance(result, Job):
                return result
            if result is not None:               # already paid for: told at once, free
                self._answer(self._asked.pop(token), result, 0.0)
        return None

    def tell(self, job: Job, observation) -> None:
        answered = self._evaluate.observe(job, observation)
        for k, (token, value) in enumerate(answered):
            self._answer(self._asked.pop(token), value, observation.cost_s if k == 0 else 0.0)
