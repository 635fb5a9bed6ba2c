"""`nasbench run`: run NAS algorithms for many trials on the simulated environment."""
import click

from nasbench_cli.commands.options import benchmark_option, data_dir_option, echo_json, finite, json_option


MAX_TRIALS = 100_000       # per algorithm; planning reads every existing file, so refuse absurd counts up front

# `--budget release`: the release notebook's fixed evaluation counts (benchmarking_examples.ipynb: 100
# iterations per round, 5 rounds): RS-50E 100 architectures, RS-10E 500, BO and RE 130 (1.3 x 100),
# Hyperband one pass of its own brackets (hb-release). Jobs started, not simulated hours, end a trial.
RELEASE_JOBS = {"rs50e": 100, "rs10e": 500, "bo10d": 130, "bo50d": 130, "re": 130, "hb-release": None}
RELEASE_TRIALS = 5
RELEASE_BUDGET_HOURS = 100_000.0   # never binding: a release trial takes about 220 simulated hours


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


def parse_overrides(items, algos, benchmark: str | None = None) -> dict:
    """`--set KEY=VALUE` (every selected algorithm with that setting) or `--set ALGO.KEY=VALUE`."""
    import dataclasses

    from benchmarks.core.errors import UserError
    from optimizers.registry import algorithm_class, algorithm_name

    from optimizers.registry import make_algorithm

    for a in algos:                      # a plugin whose Settings is not a dataclass: its one-line error
        make_algorithm(a, None, benchmark)
    fields = {a: {f.name for f in dataclasses.fields(algorithm_class(a, benchmark).Settings)} for a in algos}
    key_of = {algorithm_name(a): a for a in algos} | {a: a for a in algos}
    overrides = {a: {} for a in algos}
    for item in items:
        if "=" not in item:
            raise UserError(f"--set expects KEY=VALUE or ALGO.KEY=VALUE, got '{item}'")
        key, value = item.split("=", 1)
        targets = algos
        if "." in key:
            algo, key = key.split(".", 1)
            if algo not in key_of:
                raise UserError(f"--set {item}: '{algo}' is not among the selected algorithms "
                                f"({', '.join(algorithm_name(a) for a in algos)})")
            targets = [key_of[algo]]
        matched = [a for a in targets if key in fields[a]]
        if not matched:
            raise UserError(f"--set {item}: no selected algorithm has a setting '{key}' "
                            f"(settings: " + "; ".join(f"{a}: {', '.join(sorted(fields[a]))}" for a in targets) + ")")
        if key == "features" and benchmark is not None:
            from benchmarks.core.features import used_kind

            if used_kind(benchmark, value) != value:     # a stand-in would run: refuse the other name
                raise UserError(f"--set {item}: {benchmark} ships no graph2vec features; say what should run: "
                                f"--set features={used_kind(benchmark, value)} (what the default stands in with)")
        for algo in matched:
            overrides[algo][key] = value
    return overrides


def summarize(paths) -> dict:
    """Per run label: trials, mean final regret with a 95% t-interval (its low end clipped at 0, as
    regret is >= 0), compute seconds per trial."""
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
        mean, low, high = t_interval(final_regrets(records))
        summary[algo] = {"trials": len(records), "mean_final_regret": mean, "ci95_half_width": (high - low) / 2,
                         "ci95_low": max(0.0, low) if math.isfinite(low) else low, "ci95_high": high,
                         "compute_s_per_trial": float(np.mean([r["compute_s"] for r in records])),
                         "table_used_up_hours": [r["table_used_up_s"] / 3600.0 for r in records
                                                 if r.get("table_used_up_s") is not None]}
    return summary


@click.command()
@click.option("--algo", "algo_text", required=True, help="Algorithm name, a comma list, 'all' (the paper's eight; on bert the bert-* five), 'proxy', 'libs', an installed plugin's "
                   "name, or your own class as module:Class or path/to/file.py:Class (see `nasbench list`).")
@benchmark_option
@click.option("--trials", type=click.IntRange(1, MAX_TRIALS), default=30, show_default=True,
              help="Trials per algorithm.")
@click.option("--budget-hours", type=click.FloatRange(min=0, min_open=True), default=None, callback=finite,
              help="Simulated wall-clock budget per trial, in hours (with one worker: training time) "
                   "[default: the benchmark's: ptb 1000, wt2 200 (10% of the time to train its table), bert 36 (50 evaluations at the mean cost)].")
@click.option("--budget-evals", type=click.IntRange(1, 10**9), default=None, metavar="N",
              help="Evaluations per trial, on benchmarks that record no training time (gpt-s, gpt-m, gpt-l: "
                   "their clock counts evaluations) [default: gpt-s and gpt-m 100, gpt-l 50].")
@click.option("--budget", "budget_kind", type=click.Choice(["hours", "release"]), default="hours", show_default=True,
              help="hours: --budget-hours of simulated time per trial; release: the release notebook's fixed "
                   "counts (rs50e 100 architectures, rs10e 500, bo10d/bo50d/re 130, hb-release one pass; "
                   "5 trials unless --trials), results labelled ALGO@release.")
@click.option("--jobs", type=click.IntRange(1), default=None, help="Trials computed at once, in local processes (default: all cores); never changes a result.")
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
@click.option("--objectives", "objectives_text", default=None, metavar="A,B[,C]",
              help="Search two or three objectives at once (multi-objective): the benchmark's loss and "
                   "hardware costs, e.g. logppl,params or logppl,params,epoch_s (ptb, wt2: logppl, params, flops, "
                   "epoch_s; bert: glue, params, train_s). Regret is then hypervolume regret against the "
                   "benchmark's true Pareto front (docs: hardware-aware search).")
@click.option("--constraint", "constraint_texts", multiple=True, metavar="OBJ<=X",
              help="Count only architectures within a budget, e.g. params<=6e6 (repeatable; <=, <, >=, >): "
                   "regret is measured against the best feasible architecture; algorithms that cannot use "
                   "the constraint still run, their infeasible finds do not count.")
@data_dir_option
@json_option
def run(algo_text, benchmark_name, trials, budget_hours, budget_evals, budget_kind, jobs, backend, scheduler, workers, label, seed,
        out, set_items, overwrite, isolate, objectives_text, constraint_texts, data_dir, as_json):
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
    from pathlib import Path

    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.run_lock import run_lock
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness.trial import check_label, check_objectives_fit, check_problem, scoring_problem
    from optimizers.registry import make_algorithm, parse_algo_list

    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        dask_choice = _backend_choice(backend, jobs, scheduler)
        algos = parse_algo_list(algo_text, benchmark_name)
        if label is not None:
            if len(algos) != 1:
                raise UserError(f"--label names one run: give one --algo, not {len(algos)}")
            check_label(label)
        overrides = parse_overrides(set_items, algos, benchmark_name)
        max_jobs = None
        from benchmarks.core.registry import budget_in_clock_units

        budget_hours = budget_in_clock_units(benchmark_name, budget_hours, budget_evals)
        if budget_kind == "release":
            max_jobs, trials, budget_hours = _release_budget(algos, trials, workers)
        objectives, constraints = scoring_problem(benchmark_name, objectives_text or (), constraint_texts)
        for algo in algos:                                      # every setting checked before anything is written
            check_objectives_fit(make_algorithm(algo, overrides.get(algo), benchmark_name), algo, objectives)
        _refuse_name_clashes(algos)
        benchmark = load_benchmark(benchmark_name, data_dir)   # builds the cache once, fails early on bad data
        if objectives or constraints:                          # an unsatisfiable constraint: one line, now
            check_problem(benchmark, objectives, constraints)
        with run_lock(Path(out), benchmark_name):
            _run_locked(algos, overrides, benchmark, benchmark_name, trials, budget_hours, jobs, workers, seed,
                        Path(out), overwrite, data_dir, as_json, label, dask_choice, max_jobs, isolate,
                        objectives, constraints)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _release_budget(algos, trials, workers) -> tuple[dict, int, float]:
    """({algo: job cap or None}, trials, budget hours) for `--budget release`; UserError for an algorithm
    the release's notebook does not run, or for simulated workers (it trains one architecture at a time)."""
    from benchmarks.core.errors import UserError

    others = [a for a in algos if a not in RELEASE_JOBS]
    if others:
        raise UserError(f"--budget release covers the release notebook's algorithms ({', '.join(RELEASE_JOBS)}), "
                        f"not {', '.join(others)}")
    if workers != 1:
        raise UserError("--budget release is the release's sequential protocol: use one worker")
    source = click.get_current_context().get_parameter_source("trials")
    if source != click.core.ParameterSource.COMMANDLINE:
        trials = RELEASE_TRIALS
    return {a: RELEASE_JOBS[a] for a in algos}, trials, RELEASE_BUDGET_HOURS


def _backend_choice(backend, jobs, scheduler):
    """None for the local backend, else where the Dask backend runs trials (a `SchedulerChoice`)."""
    from benchmarks.core.errors import UserError

    source = click.get_current_context().get_parameter_source("scheduler")
    if backend == "local":
        if scheduler is not None and source == click.core.ParameterSource.COMMANDLINE:
            raise UserError("--scheduler is for --backend dask; the local backend runs --jobs processes here")
        return None
    if jobs is not None:
        raise UserError("--jobs is for the local backend; with --backend dask the cluster's workers run the "
                        "trials (start N of them with --scheduler local:N)")
    from nasbench_cli.harness.dask_backend import import_distributed, parse_scheduler

    choice = parse_scheduler(scheduler)
    import_distributed()      # a one-line install hint before anything is loaded or written
    return choice


def _run_locked(algos, overrides, benchmark, benchmark_name, trials, budget_hours, jobs, workers, seed, out,
                overwrite, data_dir, as_json, label=None, dask_choice=None, max_jobs=None, isolate=False,
                objectives=(), constraints=()):
    """The run itself, while this process holds the results folder's lock."""
    import math
    import os

    from nasbench_cli.harness.runner import execute, plan_trials, remove_stale_temp_files, trial_path
    from nasbench_cli.harness.trial import current_scores_checksum, default_label

    from benchmarks.core.registry import get_spec

    spec = get_spec(benchmark_name)
    budget_s = budget_hours * spec.clock_unit_s
    remove_stale_temp_files(out, benchmark_name)
    scores = {algo: current_scores_checksum(benchmark, algo, overrides.get(algo)) for algo in algos}
    todo, done = plan_trials(out, benchmark_name, algos, trials, seed, budget_s, overrides, overwrite, scores,
                             workers, benchmark.checksum, label, max_jobs, isolate, objectives, constraints)
    cores = os.cpu_count() or 1
    if jobs is not None and jobs > cores and not as_json:
        click.echo(f"note: --jobs {jobs} is more than the {cores} cores here; trials will share them", err=True)
    jobs = max(1, min(jobs or cores, len(todo)))    # never more processes than trials to run
    errors = []
    regret_word = "HV regret" if objectives else "regret"
    if todo:
        _preflight(benchmark, sorted({spec.algo for spec in todo}, key=algos.index), overrides, quiet=as_json)
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if dask_choice is not None and not as_json:
            click.echo(f"running {len(todo)} trial{'s' if len(todo) != 1 else ''} on {dask_choice.describe()}",
                       err=True)

        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("{task.fields[last]}"), disable=as_json,
                      transient=False) as progress:
            task = progress.add_task(f"{benchmark_name} trials", total=len(todo) + len(done),
                                     completed=len(done), last="")

            finished = [len(done)]

            def on_progress(shares):
                """Within long trials: the bar moves by the share of each running trial's budget simulated."""
                running = ", ".join(f"{spec.label} #{spec.trial} {share:.0%} ({jobs} jobs)"
                                    for spec, (share, jobs) in list(shares.items())[:2])
                progress.update(task, completed=finished[0] + sum(share for share, _ in shares.values()),
                                last=f"running: {running}" if running else "")

            def on_done(spec, summary):
                finished[0] += 1
                progress.update(task, completed=finished[0])
                last = "failed" if summary is None else \
                    f"{spec.label} #{spec.trial}: {regret_word} {summary['final_regret']:.4f}" \
                    if summary["final_regret"] is not None else f"{spec.label} #{spec.trial}: no incumbent"
                progress.update(task, last=last)

            try:
                if dask_choice is None:
                    _, errors = execute(todo, jobs, data_dir, on_done,
                                        on_progress if progress.live.console.is_terminal and not as_json else None)
                else:
                    _, errors = _execute_on_dask(todo, dask_choice, benchmark, algos, overrides, out, done,
                                                 on_done)
            except KeyboardInterrupt as interrupt:
                finished = sum(1 for spec in todo if spec.path.is_file())
                how = "terminated" if isinstance(interrupt, Terminated) else "interrupted"
                click.echo(f"{how}: {finished + len(done)} finished trial files kept in {out}; "
                           "rerun the same command to complete the rest", err=True)
                raise click.exceptions.Exit(143 if isinstance(interrupt, Terminated) else 130)
    elif not as_json:
        click.echo(f"nothing to do: all {len(done)} trials are already in {out}")
    labels = [label] if label else [default_label(a, overrides.get(a), benchmark_name, workers, bool(max_jobs))
                                    for a in algos]
    paths = [trial_path(out, benchmark_name, label, k) for label in labels for k in range(trials)]
    summary = summarize([p for p in paths if p.is_file()])
    if as_json:
        budget_key = "budget_evaluations" if spec.clock == "evaluations" else "budget_hours"
        echo_json({"benchmark": benchmark_name, budget_key: budget_hours, "workers": workers, "out": str(out),
                   "ran": len(todo) - len(errors), "skipped": len(done), "errors": errors,
                   "algorithms": {a: {k: (None if isinstance(v, float) and math.isnan(v) else v)
                                      for k, v in s.items()} for a, s in summary.items()}})
    else:
        for label in labels:
            if label in summary:
                s = summary[label]
                n = f"{s['trials']} trial{'s' if s['trials'] != 1 else ''}"
                if math.isnan(s["mean_final_regret"]):
                    regret = f"no incumbent in any of its {n}"
                elif math.isnan(s["ci95_low"]):
                    regret = f"final regret {s['mean_final_regret']:.4f} ({n})"
                else:
                    regret = (f"final regret {s['mean_final_regret']:.4f} (95% CI {s['ci95_low']:.4f}–"
                              f"{s['ci95_high']:.4f}, {n})")
                if objectives:
                    regret = regret.replace("final regret", "final HV regret")
                click.echo(f"{label:<8} {regret}, {s['compute_s_per_trial']:.2f} s compute per trial")
                used = s["table_used_up_hours"]
                if used:
                    click.echo(f"note: {label}: {len(used)} of {s['trials']} trials started every architecture of "
                               f"the table, after {sum(used) / len(used) * 3600 / spec.clock_unit_s:.0f} "
                               f"{spec.clock_label} on average; the rest "
                               "of the budget could only continue trained ones")
        for error in errors:
            click.echo(f"error: {error}", err=True)
    if errors:
        raise click.exceptions.Exit(1)


def _execute_on_dask(todo, choice, benchmark, algos, overrides, out, done, on_done):
    """Run `todo` on a Dask cluster; the scheduler going away is one line (exit 1), files kept."""
    from nasbench_cli.harness.dask_backend import SchedulerLost, execute_dask, gather_inputs

    try:
        inputs = gather_inputs(benchmark, algos, overrides, compress=choice.local_workers is None)
        return execute_dask(todo, choice, inputs, benchmark, on_done)
    except SchedulerLost as lost:
        finished = sum(1 for spec in todo if spec.path.is_file())
        click.echo(f"error: {lost}; {finished + len(done)} finished trial files kept in {out}; "
                   "rerun the same command to complete the rest", err=True)
        raise click.exceptions.Exit(1)


def _preflight(benchmark, algos, overrides, quiet):
    """Check in this process what every trial will read, before any worker starts: one line naming the
    algorithm for what is missing (nasbench_cli.harness.preflight); features built once here."""
    from benchmarks.core.features import G2V_DIMS, is_g2v_cached, used_kind
    from nasbench_cli.harness.preflight import check_features, check_scores
    from optimizers.registry import make_algorithm

    for algo in algos:
        algorithm = make_algorithm(algo, overrides.get(algo), benchmark.name)
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
