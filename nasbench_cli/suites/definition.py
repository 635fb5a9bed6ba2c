"""What a suite is, the shipped suites, and user suites read from a TOML file.

A task is one benchmark with its objectives, constraints, budget (in the benchmark's clock units; None:
its default) and simulated workers; its `name` is where its results go (`OUT/<task>/<benchmark>/<label>/`).
A suite is a name, a version and its tasks.

The shipped `dev` and `test` suites partition every task nasbench has (`all_tasks`), by one rule
written down here and in docs/results/suites.md:

    dev holds every task on ptb, where the built-in defaults were tuned (lcbo's and mo-lcbo's on ptb,
    seeds 1000+), and, of every other family with more than one member (cells: ptb, wt2; gpt-s/m/l;
    nmt-*; lora-*), the member whose name has the smallest SHA-256 (a fixed draw nobody chose) -- unless
    that family already has a member in dev; test holds every other task.

So a default may be tuned on dev only, and a claim is made on test. `smoke` is a handful of test tasks
at small budgets, sized for CI. Tasks: each benchmark single-objective at its default budget; with its
loss and second objective where it has two or more (multi-objective); and the constrained variants in
`CONSTRAINED`. A new benchmark lands in a suite by the rule, with no edit here. The cost-aware
`nmt-*-updates` are the nmt tables on another clock, not new tasks: no shipped suite holds them.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.core.errors import UserError

SUITE_VERSION = 1
# constrained single-objective variants: (benchmark, constraint); budgets where the constraint leaves
# several architectures (checked by a test: none is degenerate)
CONSTRAINED = (("ptb", "params<=6e6"), ("nmt-ru-en", "decode_s<=300"), ("nmt-so-en", "decode_s<=400"),
               ("nmt-sw-en", "decode_s<=500"), ("nmt-zh-en", "decode_s<=250"))


@dataclass(frozen=True)
class Task:
    benchmark: str
    objectives: tuple = ()
    constraints: tuple = ()
    budget: float | None = None        # in the benchmark's clock units; None: its default
    workers: int = 1

    @property
    def name(self) -> str:
        """'ptb', 'ptb+mo-logppl-params', 'nmt-so-en+decode_s<=400', ... (a folder name)."""
        parts = [self.benchmark]
        if self.objectives:
            parts.append("mo-" + "-".join(self.objectives))
        parts += [c.replace(" ", "") for c in self.constraints]
        if self.budget is not None:
            parts.append(f"budget-{self.budget:g}")
        if self.workers != 1:
            parts.append(f"{self.workers}w")
        return "+".join(parts)

    @property
    def kind(self) -> str:
        return "multi-objective" if self.objectives else ("constrained" if self.constraints else "single-objective")


@dataclass(frozen=True)
class Suite:
    name: str
    version: int
    description: str
    tasks: tuple = field(default_factory=tuple)
    rule: str = ""


def task_count(count: int) -> str:
    """'1 task', '23 tasks': a number of tasks in words, for figures and listings."""
    return f"{count} task" if count == 1 else f"{count} tasks"


def family(benchmark: str) -> str:
    """'cells' (ptb, wt2), 'gpt', 'nmt', 'lora', or the benchmark itself (bert)."""
    if benchmark in ("ptb", "wt2"):
        return "cells"
    return benchmark.split("-")[0] if "-" in benchmark else benchmark


def _task_benchmarks() -> dict:
    """The catalog's benchmarks that make tasks: all but the cost-aware `nmt-*-updates`, which are the
    nmt tables again on another clock (the same systems and scores, not new tasks; a user suite may name them)."""
    from benchmarks.core.catalog import BENCHMARKS

    return {name: spec for name, spec in BENCHMARKS.items() if spec.clock != "updates"}


def all_tasks() -> tuple:
    """Every task nasbench has, in catalog order: single-objective, multi-objective, constrained."""
    tasks = []
    for name, spec in _task_benchmarks().items():
        tasks.append(Task(name))
        if len(spec.objectives) >= 2:
            tasks.append(Task(name, objectives=tuple(spec.objectives[:2])))
    tasks += [Task(name, constraints=(constraint,)) for name, constraint in CONSTRAINED if name in _task_benchmarks()]
    return tuple(tasks)


def dev_benchmarks() -> set:
    """The benchmarks whose tasks are in dev (the rule in the module docstring)."""
    chosen = {"ptb"}
    families: dict = {}
    for name in _task_benchmarks():
        families.setdefault(family(name), []).append(name)
    for members in families.values():
        if len(members) > 1 and not chosen & set(members):
            chosen.add(min(members, key=lambda n: hashlib.sha256(n.encode()).hexdigest()))
    return chosen


RULE = ("dev: every task on ptb (where the built-in defaults were tuned) and, of every other family with more "
        "than one member, the member whose name has the smallest SHA-256; test: every other task")


def shipped() -> dict:
    """{name: Suite} of the suites that come with nasbench."""
    tasks = all_tasks()
    dev = dev_benchmarks()
    test_tasks = tuple(t for t in tasks if t.benchmark not in dev)
    firsts: dict = {}
    for t in test_tasks:           # smoke: each family's first single-objective test task, at a small budget
        if not t.objectives and not t.constraints and family(t.benchmark) in SMOKE_BUDGETS:
            firsts.setdefault(family(t.benchmark), Task(t.benchmark, budget=SMOKE_BUDGETS[family(t.benchmark)]))
    smoke = tuple(firsts.values())
    return {
        "dev": Suite("dev", SUITE_VERSION, "tasks for tuning and developing algorithms", 
                     tuple(t for t in tasks if t.benchmark in dev), RULE),
        "test": Suite("test", SUITE_VERSION, "held-out tasks: where claims are made", test_tasks, RULE),
        "smoke": Suite("smoke", SUITE_VERSION, "one test task per family at a small budget, sized for CI", smoke,
                       "of each family, its first single-objective test task, at a small budget"),
    }


SMOKE_BUDGETS = {"cells": 20.0, "gpt": 20.0, "nmt": 20.0, "lora": 100.0}    # hours, evaluations, checkpoints


def load_suite(text: str) -> Suite:
    """A shipped suite by name, or a user's suite from a TOML file; UserError (one line) otherwise."""
    suites = shipped()
    if text in suites:
        return suites[text]
    path = Path(text)
    if path.suffix == ".toml" or path.is_file():
        return read_suite_file(path)
    from benchmarks.core.names import did_you_mean

    raise UserError(f"unknown suite '{text}'{did_you_mean(text, suites)}; shipped: {', '.join(suites)}, or a "
                    "path to your own suite file (.toml)")


def read_suite_file(path: Path) -> Suite:
    """A suite file:

        name = "mine"            # optional: the file's stem
        version = 1              # optional
        description = "..."      # optional
        [[task]]
        benchmark = "ptb"
        objectives = ["logppl", "params"]   # optional
        constraints = ["params<=6e6"]       # optional
        budget = 300                        # optional, the benchmark's clock units
        workers = 4                         # optional
    """
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"suite file not found: {path}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"{path}: not a TOML suite file ({exc})") from None
    unknown = sorted(set(data) - {"name", "version", "description", "task"})
    if unknown:
        raise UserError(f"{path}: unknown key '{unknown[0]}' (keys: name, version, description, [[task]])")
    raw = data.get("task")
    if not isinstance(raw, list) or not raw:
        raise UserError(f"{path}: a suite needs at least one [[task]] with a benchmark")
    tasks = [_task(entry, f"{path}: task {k}") for k, entry in enumerate(raw, 1)]
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: a task is listed twice ({next(n for n in names if names.count(n) > 1)})")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{path}: name must be a non-empty string, e.g. name = \"mine\"")
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise UserError(f"{path}: version must be a whole number >= 1, got {version!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise UserError(f"{path}: description must be a string")
    return Suite(name.strip(), version, description, tuple(tasks), "")


def _task(entry, where: str) -> Task:
    """One [[task]] of a suite file, checked as `run` checks its options (one line, UserError, naming the
    file and the task): a known benchmark; objectives (a list, or 'a,b') and constraints (a list, or
    'c1,c2') the benchmark has; a budget > 0 in its clock units (whole for a clock that counts); 1-1024
    workers. Nothing is left to fail, or to be skipped with a note, when the suite runs."""
    from benchmarks.core.problem import parse_problem
    from benchmarks.core.registry import get_spec

    if not isinstance(entry, dict) or "benchmark" not in entry:
        raise UserError(f"{where} needs a benchmark")
    bad = sorted(set(entry) - {"benchmark", "objectives", "constraints", "budget", "workers"})
    if bad:
        raise UserError(f"{where}: unknown key '{bad[0]}' (benchmark, objectives, constraints, budget, workers)")
    benchmark = entry["benchmark"]
    if not isinstance(benchmark, str):
        raise UserError(f"{where}: benchmark must be a name in quotes, e.g. benchmark = \"ptb\"")
    try:
        spec = get_spec(benchmark)
        objectives = _texts(entry.get("objectives", ()), "objectives")
        constraints = _texts(entry.get("constraints", ()), "constraints")
        parsed_objectives, _ = parse_problem(benchmark, objectives, constraints)
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    budget = entry.get("budget")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
            raise UserError(f"{where}: budget must be a number > 0 ({spec.clock} on {benchmark}), got {budget!r}")
        if spec.counts and budget != int(budget):
            raise UserError(f"{where}: budget must be a whole number of {spec.clock} on {benchmark}, got {budget!r}")
    workers = entry.get("workers", 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 1024:
        raise UserError(f"{where}: workers must be a whole number from 1 to 1024, got {workers!r}")
    return Task(benchmark, tuple(parsed_objectives), tuple(constraints),
                None if budget is None else float(budget), workers)


def _texts(value, key: str) -> list:
    """A list of strings, or one comma-separated string, as a list of its non-blank parts (spaces removed);
    UserError for anything else."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{key} must be a list of strings, e.g. {key} = "
                        + ('["logppl", "params"]' if key == "objectives" else '["params<=6e6"]'))
    parts = [part.replace(" ", "") for v in value for part in v.split(",")]
    if value and not any(parts):
        raise UserError(f"{key} names nothing; leave the key out instead")
    return [part for part in parts if part]
