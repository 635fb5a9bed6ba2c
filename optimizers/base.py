"""The ask/tell protocol every NAS algorithm implements.

The harness owns the loop, the simulated clock and the workers (`nasbench_cli/harness/simulator.py`). Once per
trial it calls `start(inputs)`; then, whenever a simulated worker is free, `ask()`, which returns a
`Job` (train architecture `arch` up to `epochs` epochs, from its checkpoint) or None ("nothing to start
until a result arrives"); when a job ends, `tell(job, observation)`. A trial ends when no job is running
and `ask()` has nothing to start, or when the budget is spent; `finish()` is then called (always).

An algorithm sees only what a real searcher has before training (`inputs.search`, an
`ArchitectureTable`: ids, parameter counts, recipes, the epochs available, the search space; the
feature matrix and training-free scores its settings name) and the observations of its own jobs: losses
and times only for the epochs it paid for. It never sees test losses, result files or the clock's
internals; the process running it holds no test losses (a trial reads them after `finish`).

Two ways to write one:
- `Algorithm`: implement `ask` and `tell` (parallel-native algorithms: random search, ASHA, RE, BO).
- `SequentialAlgorithm`: implement `search(inputs)` as straight-line code, a generator that yields a
  `Job` and receives its `Observation`, or yields a list of jobs and receives their observations (same
  order) once all of them have ended. A list runs on as many workers as are free (a synchronous batch:
  e.g. one Hyperband rung); a single job occupies one worker while the others wait.
"""
import dataclasses
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from benchmarks.core.table import ArchitectureTable


@dataclass(frozen=True, slots=True, eq=False)
class Job:
    """Train row `arch` up to `epochs` epochs from its checkpoint. `overhead_s`: simulated seconds of
    other work the worker does first (e.g. scoring candidates with a training-free metric), charged
    to the trial's clock before the training starts. Compared by identity: each ask gives a new job."""
    arch: int
    epochs: int
    overhead_s: float = 0.0


@dataclass(frozen=True)
class SearchInputs:
    """What the harness hands an algorithm for one trial (what a searcher knows before training; read-only)."""
    search: ArchitectureTable         # ids, sizes, recipes, epochs available, the space: no losses, no times
    rng: np.random.Generator          # seeded from the trial's seed
    seed: int                         # the trial's seed, for libraries that take an int
    features: np.ndarray | None       # [n_arch, d] rows aligned with search, or None
    scores: np.ndarray | None = None  # [n_arch] training-free scores (NaN unscored, -inf degenerate) or None
    workers: int = 1                  # simulated workers training side by side
    objectives: tuple = ()            # multi-objective runs: objective names (benchmarks.core.objectives), else ()
    constraints: tuple = ()           # benchmarks.core.constraints.Constraint bounds (--constraint), else ()
    known_objectives: np.ndarray | None = None   # [n_arch, len(objectives)] values known before training
    #                                   (params, flops; natural direction), NaN for objectives training reveals


class Algorithm:
    """Base class: subclasses set `name`, `description`, `Settings` and implement `start`, `ask`, `tell`."""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    # What the algorithm uses of a benchmark (names in benchmarks.core.space.OFFERS: "epochs", "graph2vec",
    # "proxies", "sample", "mutate", "neighbours", "encoding", "distance", "configspace"); a benchmark that
    # does not offer all of them refuses it in one line before anything runs. Its settings add to this:
    # `features` naming graph2vec needs "graph2vec", naming a space's encoding "encoding"; `metric` "proxies".
    needs: ClassVar[frozenset] = frozenset()
    # True: searches a front of two or three objectives (`nasbench run --objectives`), and is refused
    # without them. Any algorithm may run on a multi-objective problem; only these use the objectives.
    multi_objective: ClassVar[bool] = False

    @dataclass(frozen=True)
    class Settings:
        pass

    def __init__(self, settings=None):
        self.settings = settings if settings is not None else self.Settings()

    @property
    def feature_kind(self) -> str | None:
        """The feature kind this algorithm reads (`settings.features`), or None."""
        return getattr(self.settings, "features", None)

    @property
    def score_metric(self) -> str | None:
        """The training-free metric this algorithm reads (`settings.metric`), or None."""
        return getattr(self.settings, "metric", None)

    @property
    def score_split(self) -> str:
        """The corpus split of the scoring minibatch whose scores it reads (`settings.score_split`)."""
        return getattr(self.settings, "score_split", "train")

    def check_table(self, search) -> None:
        """UserError (one line) if a setting cannot work on this table (`search`: the searcher's view, with
        `n` architectures and `max_epochs`). `nasbench run` calls it for every algorithm of a run before
        any trial starts, so that no algorithm's trials are written before another one's setting fails.
        Default: nothing to check."""

    def start(self, inputs: SearchInputs) -> None:
        """Called once, before the first `ask` of a trial."""

    def ask(self) -> Job | None:
        """The next job for a free worker, or None: nothing to start until a running job ends."""
        raise NotImplementedError

    def tell(self, job: Job, observation) -> None:
        """`job` ended; `observation` (benchmarks.core.environment.Observation) is what it revealed."""

    def finish(self) -> None:
        """Called once when the trial ends (also after an error): release resources."""

    # settings that say where something is, not what runs (ftpfn's `weights` folder): left out of the
    # recorded settings, their hash and the run's label, so the same run is the same result wherever it lives
    location_settings: ClassVar[tuple] = ()

    def settings_dict(self) -> dict:
        settings = dataclasses.asdict(self.settings)
        for name in self.location_settings:
            settings.pop(name, None)
        return settings


class SequentialAlgorithm(Algorithm):
    """An algorithm written as straight-line code: `search(inputs)` is a generator.

        def search(self, inputs):
            for row in inputs.rng.permutation(inputs.search.n).tolist():
                observation = yield Job(row, 50)                    # one job
            observations = yield [Job(r, 1) for r in rows]          # a batch: all must end first

    Returning from the generator ends the search. The code between two yields runs inside `ask`, so
    it sees every observation sent so far and nothing else.
    """

    def search(self, inputs: SearchInputs):
        raise NotImplementedError

    def start(self, inputs: SearchInputs) -> None:
        self._generator = self.search(inputs)
        self._queue: deque = deque()      # jobs of the current yield not yet handed to a worker
        self._slots: dict = {}            # id(job) -> its position in the current yield
        self._results: list = []          # observations of the current yield, by position
        self._waiting = 0                 # jobs of the current yield not yet told
        self._batch = False               # the current yield was a list
        self._reply = None                # what to send into the generator next
        self._started = self._done = False

    def ask(self) -> Job | None:
        if self._queue:
            return self._queue.popleft()
        if self._waiting or self._done:
            return None
        try:
            item = self._generator.send(self._reply) if self._started else next(self._generator)
        except StopIteration:
            self._done = True
            return None
        self._started, self._reply = True, None
        self._batch = isinstance(item, (list, tuple))
        jobs = list(item) if self._batch else [item]
        if not all(isinstance(job, Job) for job in jobs):
            raise TypeError(f"{self.name}: search() must yield a Job or a list of Jobs, got {item!r}")
        if not jobs:              # an empty batch: answered at once
            self._reply = []
            return self.ask()
        self._slots = {id(job): k for k, job in enumerate(jobs)}
        self._results = [None] * len(jobs)
        self._waiting = len(jobs)
        self._queue.extend(jobs)
        return self._queue.popleft()

    def tell(self, job: Job, observation) -> None:
        self._results[self._slots.pop(id(job))] = observation
        self._waiting -= 1
        if self._waiting == 0:
            self._reply = self._results if self._batch else self._results[0]

    def finish(self) -> None:
        self._generator.close()
