"""One run, described once: what is run (algorithms and their settings), on what (benchmark, data
folder), with which budget, objectives and constraints, how many trials and simulated workers, whether
isolated, where trials run and where their files go.

`nasbench run` and `nasbench.run(...)` each create one `RunDescription` (`describe_run` checks every
value against the benchmark and the registry, once), and it is the only thing handed down: the plan
(`runner.plan_trials`) turns it into one `TrialSpec` per trial, and a worker runs a `TrialSpec`.
A suite creates one per task.
"""
import math
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.core.errors import UserError
from nasbench_cli.results.record import check_label, settings_hash


@dataclass(frozen=True)
class RunDescription:
    """A run of one or more algorithms on one benchmark; frozen and picklable (it travels to workers).

    Budget: `budget` in the benchmark's clock units (simulated hours, or evaluations on a benchmark
    that records no training time), `budget_s` the same in simulated seconds. `max_jobs`: per
    algorithm, the jobs a trial starts at most (`--budget release`), else empty. Trial k is seeded
    `seed + k`. `overrides`: per algorithm, its changed settings as (key, text) pairs."""
    benchmark: str
    algos: tuple[str, ...]
    budget: float
    budget_s: float
    trials: int = 30
    seed: int = 0
    workers: int = 1
    overrides: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    max_jobs: tuple[tuple[str, int | None], ...] = ()
    objectives: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    label: str | None = None
    isolate: bool = False
    stop_at_best: bool = False      # end each trial once its incumbent is the table's best by validation
    out: Path | None = Path("results")
    overwrite: bool = False
    data_dir: Path | None = None
    jobs: int | None = None
    backend: object = None          # None: local worker processes; else a dask_backend.SchedulerChoice

    def __post_init__(self):
        if not self.algos:
            raise UserError("a run needs at least one algorithm")
        if not (isinstance(self.trials, int) and self.trials >= 1 and isinstance(self.workers, int) and self.workers >= 1):
            raise UserError("a run needs trials >= 1 and workers >= 1 (integers)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or \
                not (0 <= self.seed and self.seed + self.trials - 1 < 2**32):
            raise UserError(f"a run needs an integer seed with 0 <= seed and seed + trials - 1 < 2**32, "
                            f"got {self.seed!r}")
        if not (math.isfinite(self.budget_s) and self.budget_s > 0):
            raise UserError(f"a run needs a finite budget > 0, got {self.budget!r}")
        if self.label is not None:
            if len(self.algos) != 1:
                raise UserError(f"--label names one run: give one --algo, not {len(self.algos)}")
            check_label(self.label)
        if self.jobs is not None and self.backend is not None:
            raise UserError("--jobs is for the local backend; with --backend dask the cluster's workers run the "
                            "trials (start N of them with --scheduler local:N)")

    @property
    def release(self) -> bool:
        """Whether trials end on a count of jobs (`--budget release`) rather than on time."""
        return bool(self.max_jobs)

    def overrides_of(self, algo: str) -> dict:
        """{setting: text} changed from `algo`'s defaults."""
        return dict(dict(self.overrides).get(algo, ()))

    def overrides_by_algo(self) -> dict:
        return {algo: self.overrides_of(algo) for algo in self.algos}

    def cap_of(self, algo: str) -> int | None:
        return dict(self.max_jobs).get(algo)

    def label_of(self, algo: str) -> str:
        """The name `algo`'s trials are compared and filed under (`--label`, else ALGO[+settings][@Kw])."""
        from nasbench_cli.harness.trial import default_label

        if self.label:
            return self.label
        return default_label(algo, self.overrides_of(algo), self.benchmark, self.workers, self.release)

    def settings_hash_of(self, algo: str) -> str:
        from optimizers.registry import algorithm_name, make_algorithm

        settings = make_algorithm(algo, self.overrides_of(algo), self.benchmark).settings_dict()
        return settings_hash(self.benchmark, algorithm_name(algo), settings, self.budget_s, self.workers,
                             self.cap_of(algo), self.objectives, self.constraints)

    def trial(self, algo: str, k: int, settings_hash_: str | None = None, label: str | None = None) -> "TrialSpec":
        """Trial k of `algo` in this run."""
        from nasbench_cli.results.files import trial_path

        label = label or self.label_of(algo)
        path = trial_path(self.out, self.benchmark, label, k)
        return TrialSpec(self, algo, k, settings_hash_ or self.settings_hash_of(algo), path, label)


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a run and where its result goes: the run's description, the algorithm, the trial's
    number (seed = run.seed + trial), its settings hash and its file."""
    run: RunDescription = field(repr=False)
    algo: str
    trial: int
    settings_hash: str
    path: Path
    label: str

    @property
    def benchmark(self) -> str:
        return self.run.benchmark

    @property
    def seed(self) -> int:
        return self.run.seed + self.trial

    @property
    def budget_s(self) -> float:
        return self.run.budget_s

    @property
    def overrides(self) -> tuple:
        return tuple(sorted(self.run.overrides_of(self.algo).items()))

    @property
    def workers(self) -> int:
        return self.run.workers

    @property
    def max_jobs(self) -> int | None:
        return self.run.cap_of(self.algo)

    @property
    def isolate(self) -> bool:
        return self.run.isolate

    @property
    def stop_at_best(self) -> bool:
        return self.run.stop_at_best

    @property
    def objectives(self) -> tuple:
        return self.run.objectives

    @property
    def constraints(self) -> tuple:
        return self.run.constraints


def describe_run(algos, benchmark: str, *, trials: int = 30, seed: int = 0, budget_hours=None, budget_evals=None,
                 workers: int = 1, set_items=(), overrides=None, release: bool = False, objectives=(),
                 constraints=(), label: str | None = None, isolate: bool = False, stop_at_best: bool = False,
                 out="results", overwrite: bool = False, data_dir=None, jobs: int | None = None,
                 backend=None) -> RunDescription:
    """The `RunDescription` of a run, every value checked against the benchmark and the registry (one
    line, UserError, for anything wrong): `algos` a list of names/specs or the --algo text; `set_items`
    the --set texts (or `overrides`, {algo: {key: text}}, already parsed); `release` the release
    notebook's fixed job counts (`--budget release`: its trials and budget replace the given ones)."""
    from benchmarks.core.problem import scoring_problem
    from benchmarks.core.registry import budget_in_clock_units, get_spec
    from optimizers.registry import parse_algo_list

    for what, value in (("budget_hours", budget_hours), ("budget_evals", budget_evals)):
        if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and math.isfinite(value) and value > 0):
            raise UserError(f"a run needs a finite {what} > 0, got {value!r}")
    algos = parse_algo_list(algos, benchmark) if isinstance(algos, str) else list(algos)
    if overrides is None:
        from nasbench_cli.harness.overrides import parse_overrides

        overrides = parse_overrides(set_items, algos, benchmark)
    budget = budget_in_clock_units(benchmark, budget_hours, budget_evals)
    max_jobs = ()
    if release:
        from nasbench_cli.harness.release import release_budget

        caps, trials, budget = release_budget(algos, trials, workers)
        max_jobs = tuple(caps.items())
    _refuse_blank(benchmark, objectives, constraints)
    parsed_objectives, parsed_constraints = scoring_problem(
        benchmark, objectives or (), [constraints] if isinstance(constraints, str) else constraints)
    if stop_at_best:
        from nasbench_cli.harness.trial import check_stop_at_best

        check_stop_at_best(True, parsed_objectives, parsed_constraints)
    return RunDescription(
        benchmark=benchmark, algos=tuple(algos), budget=budget, budget_s=budget * get_spec(benchmark).clock_unit_s,
        trials=trials, seed=seed, workers=workers,
        overrides=tuple((a, tuple(sorted((overrides.get(a) or {}).items()))) for a in algos),
        max_jobs=max_jobs, objectives=tuple(parsed_objectives), constraints=tuple(str(c) for c in parsed_constraints),
        label=label, isolate=isolate, stop_at_best=bool(stop_at_best), out=None if out is None else Path(out),
        overwrite=overwrite, data_dir=None if data_dir is None else Path(data_dir), jobs=jobs, backend=backend)


def _refuse_blank(benchmark: str, objectives, constraints) -> None:
    """UserError (one line) for an empty or blank `--objectives` or `--constraint` (`''`, `','`): an unset
    variable in a CI line must not silently turn the run into an unconstrained single-objective one."""
    from benchmarks.core.objectives import benchmark_objectives

    if isinstance(objectives, str) and not any(part.strip() for part in objectives.split(",")):
        raise UserError(f"--objectives {objectives!r} names no objective; give two or three of {benchmark}'s "
                        f"({', '.join(benchmark_objectives(benchmark))}), or leave the option out for one")
    for text in [constraints] if isinstance(constraints, str) else constraints or ():
        if isinstance(text, str) and not any(part.strip() for part in text.split(",")):
            raise UserError(f"--constraint {text!r} states no constraint; give OBJ<=X (e.g. params<=6e6), or "
                            "leave the option out")
