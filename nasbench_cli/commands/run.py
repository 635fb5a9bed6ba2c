"""`nasbench run`: run NAS algorithms for many trials on the simulated environment."""
import time

import click

from benchmarks.core.catalog import BENCHMARKS, NMT_DEFAULT_BUDGET
from nasbench_cli.commands.options import benchmarks_option, data_dir_option, echo_json, finite, json_option

LOG_EVERY_S = 10.0   # without a terminal: a line per finished trial, at most this often (seconds)
LOG_RUNNING_EVERY_S = 60.0   # without a terminal: a line on the running trials when none ended for this long


class LogPace:
    """Without a terminal: when a line is due (times in seconds, `time.monotonic()`). A finished trial's line
    comes at most every LOG_EVERY_S after the previous finished trial's line (the first and the last always);
    a line on the running trials when no line at all was written for LOG_RUNNING_EVERY_S. A running line does
    not hold back a finished trial's line."""

    def __init__(self, started: float):
        self.line_at = self.finished_line_at = started

    def running_due(self, now: float) -> bool:
        if now - self.line_at < LOG_RUNNING_EVERY_S:
            return False
        self.line_at = now
        return True

    def finished_due(self, now: float, always: bool = False) -> bool:
        if not always and now - self.finished_line_at < LOG_EVERY_S:
            return False
        self.line_at = self.finished_line_at = now
        return True


def running_line(shares: dict, limit: int = 3) -> str:
    """'dyhpo #0 35% (6674 jobs), ...' for the running trials that reported ({spec: (share, jobs)}):
    the share of each one's budget simulated so far, the first `limit` of them, then how many more."""
    items = list(shares.items())
    text = ", ".join(f"{spec.label or spec.algo} #{spec.trial} {share:.0%} ({jobs} jobs)"
                     for spec, (share, jobs) in items[:limit])
    return text + (f" and {len(items) - limit} more" if len(items) > limit else "")


# option help made from the catalog, so that it names every benchmark; a family whose members share a
# value is named once (`nmt-*`), which also keeps click from wrapping a name at its hyphens
def _grouped(value_of, names) -> list:
    """[(label, value)]: benchmarks with the same value, a whole family as its pattern (`nmt-*`), in catalog order."""
    from benchmarks.core.catalog import FAMILIES, FAMILY_PATTERNS

    groups: dict = {}
    for name in names:
        groups.setdefault(value_of(name), []).append(name)
    out = []
    for value, members in groups.items():
        for family, family_members in FAMILIES.items():
            if set(family_members) <= set(members):
                members = [m for m in members if m not in family_members] + [FAMILY_PATTERNS[family]]
        out.append((", ".join(members), value))
    return out


OBJECTIVES_BY_BENCHMARK = "; ".join(f"{label}: {value}" for label, value in _grouped(
    lambda n: ", ".join(BENCHMARKS[n].objectives), [n for n, spec in BENCHMARKS.items() if len(spec.objectives) > 1]))
DEFAULT_BUDGETS = {clock: ", ".join(f"{label} {value}" for label, value in _grouped(
    lambda n: f"{BENCHMARKS[n].default_budget:g}", [n for n, spec in BENCHMARKS.items() if spec.clock in clocks]))
    or "none" for clock, clocks in (("hours", ("hours",)), ("evaluations", ("evaluations", "checkpoints")))}
DEFAULT_BUDGETS["evaluations"] += (f"; nmt-*-updates the training updates of {NMT_DEFAULT_BUDGET} median systems "
                                   "of the pair")

MAX_TRIALS = 100_000       # per algorithm; planning reads every existing file, so refuse absurd counts up front

class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: workers stopped, finished trials kept."""


def _raise_terminated(signum, frame):
    raise Terminated


def _refuse_name_clashes(algos) -> None:
    """UserError (one line) if two algorithms of one run would be recorded under the same name (two
    plugins whose classes share a `name`): their result files would overwrite each other."""
    from benchmarks.core.errors import UserError
    from optimizers.registry import algorithm_name

    seen: dict = {}
    for algo in algos:
        name = algorithm_name(algo)
        if name in seen:
            raise UserError(f"{seen[name]} and {algo} are both named '{name}': their results would overwrite "
                            "each other; give one class another `name` (or run them separately with --label)")
        seen[name] = algo


def summarize(paths) -> dict:
    """Per run label: trials, those without an incumbent (`no_incumbent`: no feasible architecture found,
    or no finite validation loss), mean final regret of the others with a 95% t-interval (its low end
    clipped at 0, as regret is >= 0), compute seconds per trial."""
    import math

    import numpy as np

    from nasbench_cli.results.aggregate import final_regrets, t_interval
    from nasbench_cli.results.files import load_trial, record_label

    by_algo = {}
    for path in paths:
        record = load_trial(path)
        by_algo.setdefault(record_label(record), []).append(record)
    summary = {}
    for algo, records in by_algo.items():
        mean, low, high = t_interval(final_regrets(records))     # of the trials that found an incumbent
        finals = final_regrets(records)
        summary[algo] = {"trials": len(records), "no_incumbent": int(np.sum(~np.isfinite(finals))),
                         "mean_final_regret": mean, "ci95_half_width": (high - low) / 2,
                         "ci95_low": max(0.0, low) if math.isfinite(low) else low, "ci95_high": high,
                         "compute_s_per_trial": float(np.mean([r["compute_s"] for r in records])),
                         "table_used_up_hours": [r["table_used_up_s"] / 3600.0 for r in records
                                                 if r.get("table_used_up_s") is not None],
                         "stopped_at_best_hours": [r["stopped_at_best_s"] / 3600.0 for r in records
                                                   if r.get("stopped_at_best_s") is not None]}
    return summary


@click.command()
@click.option("--algo", "algo_text", required=True, help="Algorithm name, a comma list, 'all' (the paper's eight; on bert, gpt-*, nmt-*, lora-* rs,bo,re,tpe,smac), 'proxy', 'libs', a syne-tune scheduler as synetune:NAME (= st-NAME), an "
                   "installed plugin's name, or your own class as module:Class or path/to/file.py:Class (see `nasbench list`).")
@benchmarks_option
@click.option("--trials", type=click.IntRange(1, MAX_TRIALS), default=30, show_default=True,
              help="Trials per algorithm.")
@click.option("--budget-hours", type=click.FloatRange(min=0, min_open=True), default=None, callback=finite,
              help="Simulated wall-clock budget per trial, in hours (with one worker: training time) "
                   "[default: the benchmark's: " + DEFAULT_BUDGETS["hours"] + "].")
@click.option("--budget-evals", type=click.IntRange(1, 10**9), default=None, metavar="N",
              help="Evaluations per trial, on benchmarks that record no training time (their clock counts "
                   "evaluations; on lora-* checkpoints trained; on the cost-aware nmt-*-updates training updates) "
                   "[default: " + DEFAULT_BUDGETS["evaluations"] + "].")
@click.option("--budget", "budget_kind", type=click.Choice(["hours", "release"]), default="hours", show_default=True,
              help="hours: --budget-hours of simulated time per trial; release: the release notebook's fixed "
                   "counts (rs50e 100 architectures, rs10e 500, bo10d/bo50d/re 130, hb-release one pass; "
                   "5 trials unless --trials), results labelled ALGO@release.")
@click.option("--jobs", type=click.IntRange(1), default=None,
              help="Trials computed at once, in local processes (default: $NASBENCH_JOBS, else all cores); "
                   "never changes a result.")
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where trials run: local worker processes (--jobs), or a dask.distributed cluster "
                   "(--scheduler; pip install -e '.[dask]'). Results are byte-identical either way.")
@click.option("--scheduler", default=None, metavar="ADDRESS", envvar="NASBENCH_DASK_SCHEDULER",
              help="With --backend dask: a scheduler address (tcp://host:8786), or local:N to start a local "
                   "cluster of N worker processes [default: local:<cores>; env NASBENCH_DASK_SCHEDULER].")
@click.option("--workers", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Simulated workers (GPUs) training architectures side by side; the budget is wall-clock "
                   "time. Results are labelled ALGO@Kw when K > 1.")
@click.option("--label", default=None, metavar="NAME",
              help="Name the run is compared under and its folder (one --algo only; default ALGO, or ALGO@Kw "
                   "with K workers): variants of one algorithm side by side, e.g. --set eta=4 --label hb-eta4.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Trial k uses seed SEED + k.")
@click.option("--out", type=click.Path(file_okay=False), default="results", show_default=True,
              help="Results folder: OUT/<benchmark>/<label>/trial-<k>.json (label: ALGO or ALGO@Kw).")
@click.option("--set", "set_items", multiple=True, metavar="[ALGO.]KEY=VALUE",
              help="Change an algorithm setting (repeatable), e.g. --set hb.eta=4.")
@click.option("--overwrite", is_flag=True, help="Rerun trials whose files were made with other settings.")
@click.option("--isolate", is_flag=True,
              help="Run each algorithm in its own process, only ask/tell messages crossing (for untrusted plugins: "
                   "no frame or object of the harness reaches it). Same results; recorded as `isolated`.")
@click.option("--stop-at-best", is_flag=True,
              help="End each trial once its incumbent is the table's best by validation: its regret cannot change "
                   "after that, so every regret, plot and test is the same, for less CPU at long budgets. Recorded "
                   "as `stopped_at_best_s`; single-objective runs without constraints.")
@click.option("--objectives", "objectives_text", default=None, metavar="A,B[,C]",
              help="Search two or three objectives at once (multi-objective): the benchmark's loss and "
                   "hardware costs, e.g. logppl,params or logppl,params,epoch_s (" + OBJECTIVES_BY_BENCHMARK +
                   "). Regret is then hypervolume regret against the benchmark's true Pareto front (docs: "
                   "hardware-aware search).")
@click.option("--constraint", "constraint_texts", multiple=True, metavar="OBJ<=X",
              help="Count only architectures within a budget, e.g. params<=6e6 (repeatable; <=, <, >=, >): "
                   "regret is measured against the best feasible architecture; algorithms that cannot use "
                   "the constraint still run, their infeasible finds do not count.")
@click.option("--suite", "suite_text", default=None, metavar="NAME|FILE.toml",
              help="Run every task of a suite (`nasbench suite list`: dev, test, smoke, or your own file) instead of "
                   "one benchmark: each task's benchmark, objectives, constraints, budget and workers; results in "
                   "OUT/<task>/; an algorithm a task cannot serve is skipped there with a note.")
@data_dir_option
@json_option
def run(algo_text, benchmark_names, trials, budget_hours, budget_evals, budget_kind, jobs, backend, scheduler, workers, label, seed,
        out, set_items, overwrite, isolate, stop_at_best, objectives_text, constraint_texts, suite_text, data_dir,
        as_json):
    """Run NAS algorithms on the simulated environment, one result file per trial.

    Each trial simulates --workers K workers on one clock: a free worker asks the algorithm for a job
    (an architecture and an epoch count), is charged exactly the recorded time of the epochs it
    continues, and the incumbent changes when jobs end. --jobs is how many trials run at once on this
    machine; it never changes a result.

    Running the same command again skips finished trials; an interrupted run (Ctrl-C, SIGTERM, a kill)
    keeps every finished trial, leaves no partial file and no worker process, so rerunning completes it
    with the same results. One run at a time may write to a results folder (per benchmark).
    """
    import signal

    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        backend_choice = _backend_choice(backend, scheduler)
        release = budget_kind == "release"
        trials_given = click.get_current_context().get_parameter_source("trials") == \
            click.core.ParameterSource.COMMANDLINE
        options = dict(trials=trials if trials_given or not release else None, seed=seed, budget_hours=budget_hours,
                       budget_evals=budget_evals, workers=workers, set_items=set_items, release=release,
                       objectives=objectives_text, constraints=constraint_texts, label=label, isolate=isolate,
                       stop_at_best=stop_at_best, out=out, overwrite=overwrite, data_dir=data_dir, jobs=jobs,
                       backend=backend_choice)
        if not as_json:
            from optimizers.registry import synetune_substitutions

            for note in synetune_substitutions(algo_text):
                click.echo(f"note: {note}", err=True)
        if suite_text is not None:
            return _run_suite(algo_text, suite_text, options, as_json)
        if len(benchmark_names) > 1:       # a family or a list: every setting checked on each before any runs
            from nasbench_cli.harness.run_description import describe_run

            for name in benchmark_names:
                for algo in describe_run(algo_text, name, **options).algos:
                    _check_runs(algo, name, options)
        payloads, failed = [], False
        for name in benchmark_names:
            if len(benchmark_names) > 1 and not as_json:
                click.echo(f"== {name}", err=True)
            payload, errors = _run_one(algo_text, name, options, as_json)
            payloads.append(payload)
            failed |= errors
        if as_json:
            echo_json(payloads[0] if len(payloads) == 1 else {"benchmarks": payloads})
        if failed:
            raise click.exceptions.Exit(1)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_suite(algo_text: str, suite_text: str, options: dict, as_json: bool) -> None:
    """`run --suite`: every task of the suite in turn, each algorithm that can serve it (checked for every
    task before any runs); results of task T in OUT/T/."""
    from pathlib import Path

    from benchmarks.core.errors import UserError
    from nasbench_cli.suites.definition import load_suite

    context = click.get_current_context()
    for option in ("benchmark_names", "objectives_text", "constraint_texts", "budget_hours", "budget_evals", "workers"):
        if context.get_parameter_source(option) == click.core.ParameterSource.COMMANDLINE:
            raise UserError(f"--suite sets each task's benchmark, objectives, constraints, budget and workers: leave "
                            f"out --{option.replace('_names', '').replace('_text', '').replace('_texts', '').replace('_', '-')}")
    if options["label"] is not None:
        raise UserError("--label names one run; a suite runs each algorithm under its own name")
    suite = load_suite(suite_text)
    plan, skipped = [], []
    for task in suite.tasks:
        task_options = _task_options(task, options, Path(options["out"]))
        algos = []
        for algo in _algo_names(algo_text, task.benchmark):
            try:
                _check_runs(algo, task.benchmark, task_options)
                algos.append(algo)
            except UserError as exc:
                skipped.append(f"{task.name}: {algo} skipped ({exc})")
        plan.append((task, algos, task_options))
    _refuse_algorithms_that_run_nowhere(algo_text, suite, plan, skipped)
    if not as_json:
        for line in skipped:
            click.echo(f"note: {line}", err=True)
        full = [task.name for task in suite.tasks if task.objectives or task.constraints]
        if options["stop_at_best"] and full:
            click.echo(f"note: --stop-at-best is not used on {len(full)} of the {len(suite.tasks)} tasks (multi-objective "
                       "or constrained: the best validation loss does not settle their regret); they run to their "
                       "budget", err=True)
    payloads, failed = [], False
    for task, algos, task_options in plan:
        if not algos:
            continue
        if not as_json:
            click.echo(f"== {suite.name}: {task.name}", err=True)
        payload, errors = _run_one(",".join(algos), task.benchmark, task_options, as_json)
        payloads.append({"task": task.name, **(payload or {})})
        failed |= errors
    if as_json:
        echo_json({"suite": suite.name, "version": suite.version, "tasks": payloads, "skipped": skipped})
    if failed:
        raise click.exceptions.Exit(1)


def _refuse_algorithms_that_run_nowhere(algo_text: str, suite, plan, skipped) -> None:
    """UserError (one line, before anything runs) for a name in --algo that no task of the suite can run: a
    misspelt or misplaced algorithm must not make a suite run that exits 0 having skipped it everywhere.
    A group ('all', 'mo', ...) may hold members some suite cannot serve; only names given alone are checked."""
    from benchmarks.core.errors import UserError

    ran = {algo for _, algos, _ in plan for algo in algos}
    for part in (p.strip() for p in algo_text.split(",") if p.strip()):
        names = {name for task in suite.tasks for name in _algo_names(part, task.benchmark)}
        if len(names) != 1 or names <= ran:
            continue
        name = names.pop()
        first = next((line for line in skipped if f": {name} skipped (" in line), None)
        reason = f"; on {first.split(': ', 1)[0]}: {first.split(' skipped (', 1)[1][:-1]}" if first else ""
        raise UserError(f"'{name}' can run on none of the {len(suite.tasks)} tasks of suite '{suite.name}'{reason}")


def _task_options(task, options: dict, out) -> dict:
    from benchmarks.core.registry import get_spec

    counts = get_spec(task.benchmark).counts
    return {**options, "objectives": ",".join(task.objectives) or None, "constraints": tuple(task.constraints),
            "stop_at_best": options["stop_at_best"] and not task.objectives and not task.constraints,
            "budget_hours": None if counts else task.budget, "budget_evals": None if task.budget is None or not counts
            else int(task.budget), "workers": task.workers, "out": out / task.name}


def _algo_names(algo_text: str, benchmark: str) -> list:
    """The --algo list on `benchmark`, groups expanded there ('all' differs by benchmark)."""
    from benchmarks.core.errors import UserError
    from optimizers.registry import parse_algo_list

    names = []
    for part in (p.strip() for p in algo_text.split(",") if p.strip()):
        try:
            names += parse_algo_list(part, benchmark)
        except UserError:
            names.append(part)              # refused per task, with its reason, by _check_runs
    return list(dict.fromkeys(names))


def _check_runs(algo: str, benchmark_name: str, options: dict) -> None:
    """UserError (one line) if `algo` cannot run this task (benchmark, objectives, epochs)."""
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.preflight import check_fits_table
    from nasbench_cli.harness.run_description import describe_run
    from nasbench_cli.harness.trial import check_objectives_fit, check_problem
    from optimizers.registry import make_algorithm

    description = describe_run(algo, benchmark_name, **options)
    algorithm = make_algorithm(algo, description.overrides_of(algo), benchmark_name)
    check_objectives_fit(algorithm, algo, description.objectives)
    benchmark = load_benchmark(benchmark_name, description.data_dir)
    if description.objectives or description.constraints:
        check_problem(benchmark, description.objectives, description.constraints)
    check_fits_table(algo, algorithm, benchmark)


def _run_one(algo_text: str, benchmark_name: str, options: dict, as_json: bool):
    """One benchmark of `run`: (its --json payload, whether a trial failed)."""
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.run_description import describe_run
    from nasbench_cli.harness.run_lock import run_lock
    from nasbench_cli.harness.trial import check_objectives_fit, check_problem
    from optimizers.registry import make_algorithm

    description = describe_run(algo_text, benchmark_name, **options)
    for algo in description.algos:                          # every setting checked before anything is written
        check_objectives_fit(make_algorithm(algo, description.overrides_of(algo), benchmark_name), algo,
                             description.objectives)
    _refuse_name_clashes(description.algos)
    benchmark = load_benchmark(benchmark_name, description.data_dir)   # builds the cache once, fails early on bad data
    if description.objectives or description.constraints:  # an unsatisfiable constraint: one line, now
        for note in check_problem(benchmark, description.objectives, description.constraints):
            if not as_json:
                click.echo(f"note: {note}", err=True)
    with run_lock(description.out, benchmark_name):
        return _run_locked(description, benchmark, as_json)


def _backend_choice(backend, scheduler):
    """None for the local backend, else where the Dask backend runs trials (a `SchedulerChoice`)."""
    from benchmarks.core.errors import UserError

    source = click.get_current_context().get_parameter_source("scheduler")
    if backend == "local":
        if scheduler is not None and source == click.core.ParameterSource.COMMANDLINE:
            raise UserError("--scheduler is for --backend dask; the local backend runs --jobs processes here")
        return None                 # --jobs with --backend dask: refused by the run description
    from nasbench_cli.harness.dask_backend import import_distributed, parse_scheduler

    choice = parse_scheduler(scheduler)
    import_distributed()      # a one-line install hint before anything is loaded or written
    return choice


def _run_locked(run, benchmark, as_json: bool):
    """The run `run` (a RunDescription) itself, while this process holds the results folder's lock."""
    import math

    from benchmarks.core.registry import get_spec
    from nasbench_cli.harness.cores import available_cores, default_jobs
    from nasbench_cli.harness.runner import execute, plan_trials, remove_stale_temp_files
    from nasbench_cli.harness.trial import current_scores_checksum
    from nasbench_cli.results.files import trial_path

    benchmark_name, out, algos, jobs = run.benchmark, run.out, list(run.algos), run.jobs
    spec = get_spec(benchmark_name)
    remove_stale_temp_files(out, benchmark_name)
    scores = {algo: current_scores_checksum(benchmark, algo, run.overrides_of(algo)) for algo in algos}
    todo, done = plan_trials(run, scores, benchmark.checksum)
    cores = available_cores()
    if jobs is not None and jobs > cores and not as_json:
        click.echo(f"note: --jobs {jobs} is more than the {cores} cores here; trials will share them", err=True)
    jobs = max(1, min(jobs or default_jobs(), len(todo)))    # never more processes than trials to run
    errors = []
    if todo and not as_json:
        from nasbench_cli.harness.cost_estimate import estimate, estimate_line, worth_saying

        total_s, costs = estimate(run, todo, done)
        if worth_saying(total_s):
            line = estimate_line(total_s, costs, len(todo), jobs if run.backend is None else
                                 (run.backend.local_workers or 1))
            if run.stop_at_best:
                line += "; at most: --stop-at-best ends the trials that reach the table's best there"
            click.echo(line, err=True)
    regret_word = "HV regret" if run.objectives else "regret"
    if todo:
        _preflight(benchmark, sorted({spec.algo for spec in todo}, key=algos.index), run.overrides_by_algo(),
                   quiet=as_json)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if run.backend is not None and not as_json:
            click.echo(f"running {len(todo)} trial{'s' if len(todo) != 1 else ''} on {run.backend.describe()}",
                       err=True)

        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("{task.fields[last]}"), disable=as_json,
                      transient=False) as progress:
            task = progress.add_task(f"{benchmark_name} trials", total=len(todo) + len(done),
                                     completed=len(done), last="")

            finished = [len(done)]
            # Not on a terminal (nohup, CI, a pipe) the bar draws only at the end: lines paced by LogPace
            log_each = not as_json and not progress.live.console.is_terminal
            started = time.monotonic()
            pace = LogPace(started)

            def on_progress(shares):
                """Within long trials: the bar moves by the share of each running trial's budget simulated;
                without a terminal, a line on them when no line was written for LOG_RUNNING_EVERY_S."""
                if log_each:
                    now = time.monotonic()
                    if shares and pace.running_due(now):
                        click.echo(f"{benchmark_name} trials {finished[0]}/{len(todo) + len(done)} "
                                   f"[{_clock(now - started)}] running: {running_line(shares)}", err=True)
                    return
                running = running_line(shares, limit=2)
                progress.update(task, completed=finished[0] + sum(share for share, _ in shares.values()),
                                last=f"running: {running}" if running else "")

            def on_done(spec, summary):
                finished[0] += 1
                progress.update(task, completed=finished[0])
                last = "failed" if summary is None else \
                    f"{spec.label} #{spec.trial}: {regret_word} {summary['final_regret']:.4f}" \
                    if summary["final_regret"] is not None else f"{spec.label} #{spec.trial}: no incumbent"
                progress.update(task, last=last)
                now, total = time.monotonic(), len(todo) + len(done)
                if log_each and summary is not None and pace.finished_due(now, finished[0] in (len(done) + 1, total)):
                    click.echo(f"{benchmark_name} trials {finished[0]}/{total} [{_clock(now - started)}] {last}, "
                               f"{summary['compute_s']:.{1 if summary['compute_s'] < 10 else 0}f} CPU s", err=True)

            try:
                if run.backend is None:
                    _, errors = execute(todo, jobs, on_done, None if as_json else on_progress)
                else:
                    _, errors = _execute_on_dask(todo, run, benchmark, done, on_done)
            except KeyboardInterrupt as interrupt:
                finished = sum(1 for spec in todo if spec.path.is_file())
                how = "terminated" if isinstance(interrupt, Terminated) else "interrupted"
                click.echo(f"{how}: {finished + len(done)} finished trial files kept in {out}; "
                           "rerun the same command to complete the rest", err=True)
                raise click.exceptions.Exit(143 if isinstance(interrupt, Terminated) else 130) from None
    elif not as_json:
        click.echo(f"nothing to do: all {len(done)} trials are already in {out}")
    labels = [run.label_of(a) for a in algos]
    paths = [trial_path(out, benchmark_name, label, k) for label in labels for k in range(run.trials)]
    summary = summarize([p for p in paths if p.is_file()])
    if as_json:
        budget_key = {"evaluations": "budget_evaluations", "checkpoints": "budget_checkpoints",
                      "updates": "budget_updates"}.get(spec.clock, "budget_hours")
        payload = {"benchmark": benchmark_name, budget_key: run.budget, "workers": run.workers, "out": str(out),
                   "ran": len(todo) - len(errors), "skipped": len(done), "errors": errors,
                   "algorithms": {a: {k: (None if isinstance(v, float) and math.isnan(v) else v)
                                      for k, v in s.items()} for a, s in summary.items()}}
    else:
        for label in labels:
            if label in summary:
                s = summary[label]
                n = f"{s['trials']} trial{'s' if s['trials'] != 1 else ''}"
                if s["no_incumbent"] and s["no_incumbent"] < s["trials"]:   # as `report`: 3 trials (2 none)
                    n += f" ({s['no_incumbent']} none)"
                if math.isnan(s["mean_final_regret"]):
                    regret = f"no incumbent in any of its {n}"
                elif math.isnan(s["ci95_low"]):
                    regret = f"final regret {s['mean_final_regret']:.4f} ({n})"
                else:
                    regret = (f"final regret {s['mean_final_regret']:.4f} (95% CI {s['ci95_low']:.4f}–"
                              f"{s['ci95_high']:.4f}, {n})")
                if run.objectives:
                    regret = regret.replace("final regret", "final HV regret")
                click.echo(f"{label:<8} {regret}, {s['compute_s_per_trial']:.2f} s compute per trial")
                used = s["table_used_up_hours"]
                if used:
                    click.echo(f"note: {label}: {len(used)} of {s['trials']} trials started every architecture of "
                               f"the table, after {sum(used) / len(used) * 3600 / spec.clock_unit_s:.0f} "
                               f"{spec.clock_label} on average; the rest "
                               "of the budget could only continue trained ones")
                stopped = s["stopped_at_best_hours"]
                if stopped:
                    mean = sum(stopped) / len(stopped) * 3600 / spec.clock_unit_s
                    click.echo(f"note: {label}: {len(stopped)} of {s['trials']} trials stopped at the table's best by "
                               f"validation (--stop-at-best), after {mean:.0f} {spec.clock_label} on average; their "
                               "regret is final from there")
        for error in errors:
            click.echo(f"error: {error}", err=True)
    return (payload if as_json else None), bool(errors)


def _clock(seconds: float) -> str:
    """Wall time as H:MM:SS."""
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _execute_on_dask(todo, run, benchmark, done, on_done):
    """Run `todo` on the run's Dask cluster; the scheduler going away is one line (exit 1), files kept."""
    from nasbench_cli.harness.dask_backend import SchedulerLost, execute_dask, gather_inputs

    out, choice = run.out, run.backend
    try:
        inputs = gather_inputs(benchmark, run.algos, run.overrides_by_algo(), compress=choice.local_workers is None)
        return execute_dask(todo, choice, inputs, benchmark, on_done)
    except SchedulerLost as lost:
        finished = sum(1 for spec in todo if spec.path.is_file())
        click.echo(f"error: {lost}; {finished + len(done)} finished trial files kept in {out}; "
                   "rerun the same command to complete the rest", err=True)
        raise click.exceptions.Exit(1) from None


def _preflight(benchmark, algos, overrides, quiet):
    """Check in this process what every trial will read, before any worker starts: one line naming the
    algorithm for what is missing (nasbench_cli.harness.preflight); features built once here."""
    from benchmarks.core.features import G2V_DIMS, is_g2v_cached, used_kind
    from nasbench_cli.harness.preflight import check_features, check_fits_table, check_scores
    from optimizers.registry import make_algorithm

    algorithms = {algo: make_algorithm(algo, overrides.get(algo), benchmark.name) for algo in algos}
    for algo, algorithm in algorithms.items():   # every setting the table can refute, before any features build
        check_fits_table(algo, algorithm, benchmark)
    for algo, algorithm in algorithms.items():
        kind = algorithm.feature_kind and used_kind(benchmark.name, algorithm.feature_kind)
        if kind in G2V_DIMS and not is_g2v_cached(benchmark, G2V_DIMS[kind]):
            _build_g2v(benchmark, G2V_DIMS[kind], kind, quiet)
        check_features(benchmark, algo, algorithm)
        note = check_scores(benchmark, algo, algorithm)
        if note and not quiet:
            click.echo(f"note: {note}", err=True)


def _build_g2v(benchmark, dims, kind, quiet):
    """First use of a graph2vec kind: embed every cell (a minute or two for PTB), then cached."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from benchmarks.core.features import g2v_features

    with Progress(TextColumn(f"graph2vec {kind} (built once, then cached)"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} epochs"), TimeElapsedColumn(),
                  TextColumn("left"), TimeRemainingColumn(), disable=quiet, transient=False) as bar:
        task = bar.add_task("", total=None)
        g2v_features(benchmark, dims, progress=lambda done, total: bar.update(task, completed=done, total=total))
