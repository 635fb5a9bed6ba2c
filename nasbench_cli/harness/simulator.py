"""Event-driven simulation of K workers training architectures side by side on one simulated clock.

The simulator owns the loop, the clock (simulated seconds) and the workers; the algorithm is asked
and told (`optimizers.base`). At time t every free worker, in worker order, asks for a job until the
algorithm answers None. A job on row `a` to `E` epochs starts at t, spends its `overhead_s`, then
trains epochs k+1..E from the checkpoint k, charged exactly what `Environment.continuation` says; it
ends at t + overhead_s + cost. Jobs end in order of end time (ties: in the order they started); all
jobs ending at the same time are recorded (checkpoint, incumbent, a trajectory point at that time) and
told before any worker asks again, so the incumbent at time t uses exactly the jobs ended by t.

Rules:
- Budget: a job that would end after the budget is not run and its worker stops (as one worker stops
  today); if its overhead still fits, that overhead is charged first (the scoring was done). Other
  workers go on. With one worker this is exactly `Environment.train`'s `BudgetExhausted`.
- One architecture is never trained by two workers at once: asking for a row whose job is still
  running is a bug in the algorithm and fails the trial with `ProtocolError` (as does a job that is
  not a `Job`, or names no row or an epoch count outside 1..max_epochs).
- The trial ends when no job is running and no free worker gets a job. `finish()` is always called.
- With `stop_at_best`, it also ends as soon as the incumbent is the table's best by validation
  (`Environment.best_possible`), after the jobs ending then are told: no later job could change the
  incumbent, so the regret at every later time is the same as in the full trial. Jobs still running are
  dropped, and `env.stopped_at_best_s` says when it stopped.
"""
import heapq
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.environment import Environment
from nasbench_cli.harness import trial_progress
from optimizers.base import Job, SearchInputs


class ProtocolError(RuntimeError):
    """An algorithm broke the ask/tell protocol (a bug in the algorithm, not in the user's input)."""


@dataclass(frozen=True)
class SimulationEnd:
    """How a simulated trial ended."""
    jobs: int                   # jobs that ran to their end
    stopped_by_budget: int      # workers stopped because their next job would end after the budget
    time_s: float               # the last simulated second any worker was busy
    stopped_at_best: bool = False   # ended early: its incumbent became the table's best by validation

    @property
    def budget_spent(self) -> bool:
        """True if the budget (not the algorithm running out of jobs) ended at least one worker."""
        return self.stopped_by_budget > 0


def run_on(env: Environment, algorithm, seed: int, features=None, scores=None, workers: int = 1,
           max_jobs: int | None = None, objectives: tuple = (), constraints: tuple = (),
           stop_at_best: bool = False) -> SimulationEnd:
    """Simulate `algorithm` on `env` with the trial inputs a seed gives (rng = default_rng(seed));
    `objectives` (names) and `constraints` (Constraint) of a multi-objective or constrained run;
    `stop_at_best`: see `simulate`."""
    inputs = SearchInputs(search=searcher_view(env.search), rng=np.random.default_rng(seed), seed=seed, features=read_only(features),
                          scores=read_only(scores), workers=workers, objectives=tuple(objectives),
                          constraints=tuple(constraints), known_objectives=known_objectives(env.search, objectives))
    return simulate(algorithm, env, inputs, workers, max_jobs, stop_at_best)


def known_objectives(search, objectives) -> np.ndarray | None:
    """[n, k] values of the objectives known before training (natural direction), NaN for the others;
    None for a single-objective run. Read-only."""
    if not objectives:
        return None
    from benchmarks.core.objectives import architecture_values, known_before_training

    values = np.full((search.n, len(objectives)), np.nan)
    for col, name in enumerate(objectives):
        if known_before_training(name, search.name):
            values[:, col] = architecture_values(search, name)
    return read_only(values)


def simulate(algorithm, env: Environment, inputs: SearchInputs, workers: int = 1,
             max_jobs: int | None = None, stop_at_best: bool = False) -> SimulationEnd:
    """Run `algorithm` on `env` (whose `budget_s` is the wall-clock budget) with `workers` simulated
    workers, starting at most `max_jobs` jobs if given (a count budget, as the release's notebook);
    with `stop_at_best`, ending once the incumbent is the table's best by validation (module notes).
    Fills `env.history` (one point per finished job), sets `env.time_s` to the last simulated second
    any worker was busy and `env.stopped_at_best_s` to when it stopped early (else None)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    budget = env.budget_s
    n, max_epochs = env.search.n, env.search.max_epochs
    running = []                      # heap of (end_s, sequence, worker, job, start_s, from, reached, cost)
    busy = set()                      # rows being trained
    free = list(range(workers))       # workers free now, in the order they ask
    clock = last_busy = 0.0
    sequence = stopped = 0
    free_in_a_row, free_limit = 0, free_job_limit(n)
    ask, tell = algorithm.ask, algorithm.tell
    continuation, record = env.continuation, env.record
    push, pop = heapq.heappush, heapq.heappop
    report = trial_progress.current()         # a worker's progress file for the parent's bar, or None
    best = env.best_possible() if stop_at_best else None
    at_best = False
    algorithm.start(inputs)
    try:
        while True:
            while free and (max_jobs is None or sequence < max_jobs):
                job = ask()
                if job is None:
                    break
                worker = free.pop(0)
                if type(job) is not Job:
                    raise ProtocolError(f"{algorithm.name}: ask() must return a Job or None, got {job!r}")
                arch, epochs, overhead = job.arch, job.epochs, job.overhead_s
                if type(arch) is not int or type(epochs) is not int or not 0 <= arch < n \
                        or not 1 <= epochs <= max_epochs or type(overhead) not in (float, int) \
                        or not 0.0 <= overhead < math.inf:
                    _check_job(algorithm, job, n, max_epochs)
                    arch, epochs, overhead = job.arch, job.epochs, job.overhead_s
                if arch in busy:
                    raise ProtocolError(f"{algorithm.name} asked to train row {arch} (id {env.search.ids[arch]}) "
                                        "while another worker is training it")
                start, reached, cost = continuation(arch, epochs)
                ready = clock + overhead if overhead else clock
                if ready > budget:
                    stopped += 1                  # not even the overhead fits: the worker stops
                    continue
                end = ready + cost
                if end > budget:
                    last_busy = max(last_busy, ready)   # the overhead was spent, the training does not fit
                    stopped += 1
                    continue
                if end == clock:                  # trains nothing and costs nothing: the clock cannot move
                    free_in_a_row += 1
                    if free_in_a_row > free_limit:
                        raise ProtocolError(f"{algorithm.name}: {free_in_a_row} jobs in a row trained nothing and "
                                            "cost nothing, so the simulated clock cannot advance; ask for epochs "
                                            "an architecture has not reached (or return None to wait)")
                else:
                    free_in_a_row = 0
                push(running, (end, sequence, worker, job, clock, start, reached, cost))
                busy.add(arch)
                sequence += 1
            if not running:
                break
            clock = running[0][0]
            finished = []
            while running and running[0][0] == clock:
                end, _, worker, job, started, start, reached, cost = pop(running)
                busy.discard(job.arch)
                finished.append((job, record(job.arch, job.epochs, start, reached, cost, end, started, worker,
                                             job.overhead_s)))
                free.append(worker)
            last_busy = max(last_busy, clock)
            for job, observation in finished:
                tell(job, observation)
            if report is not None:
                report(clock, budget, len(env.history.time_s))
            if best is not None and env.incumbent_key == best:
                at_best = True
                break
    finally:
        algorithm.finish()
    env.time_s = last_busy
    env.stopped_at_best_s = last_busy if at_best else None
    return SimulationEnd(len(env.history.time_s), stopped, last_busy, at_best)


def searcher_view(search):
    """What a searcher is handed of the harness's table: its `searcher_view` (ids, sizes, recipes, epochs
    available, features, the space; no curves). A table without one (a test's stand-in) is handed as is."""
    return getattr(search, "searcher_view", search)


def read_only(array):
    """An array handed to an algorithm over memory it cannot write (`benchmarks.core.table.immutable`;
    None stays None): the caller's copy, shared with later trials in this process, cannot be changed
    through it, not even by switching its WRITEABLE flag back on."""
    from benchmarks.core.table import immutable

    return None if array is None else immutable(np.asarray(array))


def free_job_limit(n_architectures: int) -> int:
    """How many jobs in a row may train nothing at no cost (re-asking an architecture at epochs it has
    reached, or past where its log ended) before a trial fails: 2n + 1,000. Such a job reveals nothing
    new; an honest searcher makes at most about one per architecture in a row (a Hyperband rung of
    diverged cells), so twice the table plus slack never stops one, while a searcher stuck in a loop
    stops after a few milliseconds instead of growing its history until memory runs out."""
    return 2 * int(n_architectures) + 1000


def _check_job(algorithm, job: Job, n: int, max_epochs: int) -> None:
    arch, epochs = job.arch, job.epochs
    if isinstance(arch, (bool, np.bool_)) or not isinstance(arch, (int, np.integer)) or not 0 <= arch < n:
        raise ProtocolError(f"{algorithm.name}: job row must be an int in 0..{n - 1}, got {arch!r}")
    if isinstance(epochs, (bool, np.bool_)) or not isinstance(epochs, (int, np.integer)) \
            or not 1 <= epochs <= max_epochs:
        raise ProtocolError(f"{algorithm.name}: job epochs must be an int in 1..{max_epochs}, got {epochs!r}")
    overhead = job.overhead_s
    if isinstance(overhead, (bool, np.bool_)) or not isinstance(overhead, (int, float, np.floating)) \
            or not (math.isfinite(overhead) and overhead >= 0):
        raise ProtocolError(f"{algorithm.name}: job overhead_s must be a finite number >= 0, got {job.overhead_s!r}")
    object.__setattr__(job, "arch", int(arch))
    object.__setattr__(job, "epochs", int(epochs))
    object.__setattr__(job, "overhead_s", float(overhead))
