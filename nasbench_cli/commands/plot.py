"""`nasbench plot`: the paper's figures from one or more results folders."""
import click

from nasbench_cli.commands.options import echo_json, expand_benchmarks, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Folder for the figures (default: the first RESULTS_DIR/figures).")
@click.option("--format", "format_text", default="png,pdf", show_default=True,
              help="Comma list of file formats: png (150 dpi), pdf, svg.")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list, or a family: nmt).")
@click.option("--algo", "algo_text", default=None,
              help="Only these run labels (comma list), drawn and listed in the legends in this order.")
@click.option("--bands/--no-bands", default=True, show_default=True,
              help="Shade an interval around the mean regret curves.")
@click.option("--band-kind", type=click.Choice(["ci95", "sem"]), default="ci95", show_default=True,
              help="The shaded interval: ci95 (95% Student-t interval of the mean) or sem (±1 standard error).")
@click.option("--title", default=None, help="Replaces the benchmark's name in every figure title.")
@click.option("--width", "width_in", type=click.FloatRange(2.0, 30.0), default=None,
              help="Figure width in inches (default 7.4; the height keeps the proportions).")
@click.option("--suite", "suite_text", default=None, metavar="NAME|FILE.toml",
              help="A suite's aggregate figures instead (RESULTS_DIR: the --out of `run --suite`): "
                   "<suite>-iqm (IQM and mean of normalised regret with 95% stratified-bootstrap intervals) and "
                   "<suite>-critical-difference (over the tasks every algorithm ran) and, when some algorithms skip tasks, "
                   "<suite>-critical-difference-all-tasks (the algorithms that ran every task, over all tasks); "
                   "with --algo, of those algorithms only.")
@click.option("--indicator", type=click.Choice(["hv", "hv-range", "igd+"]), default="hv", show_default=True,
              help="Multi-objective runs: what the regret figures draw (as `report --indicator`; the axis names it). "
                   "hv: the recorded HV regret; hv-range and igd+: recomputed job by job from the trials' jobs.")
@json_option
def plot(results_dirs, out_dir, format_text, benchmark_text, algo_text, bands, band_kind, title, width_in, as_json,
         suite_text=None, indicator="hv"):
    """Draw the figures of each benchmark from the trial files of `nasbench run`.

    \b
    Always, per benchmark:
    <benchmark>-regret-vs-time     mean regret (shaded band) vs simulated hours, log-log
    <benchmark>-final-regret-cdf   CDF of the final regret of every trial (paper's Fig. 12)
    With two or more runs of a benchmark:
    <benchmark>-mean-rank          mean rank among the runs over simulated time
    With runs on simulated workers (--workers K):
    <benchmark>-regret-by-workers  one panel per worker count
    <benchmark>-worker-utilisation share of busy workers over time
    With multi-objective runs (--objectives):
    <benchmark>-fronts             true front and each run's median attainment surface
    With results of two or more benchmarks (e.g. `nasbench plot res-ptb res-wt2 res-bert`):
    critical-difference            mean rank of final regret across benchmarks, Friedman test and
                                   Nemenyi's critical difference (Demšar 2006); needs three or more
                                   runs common to every benchmark

    Each run keeps one colour and marker in every figure (colour-blind-safe palette); the line
    style says the worker count. Trajectories are step functions of simulated time on a common
    log-spaced grid; a trial counts from its first incumbent on. Regret below 1e-3 (including 0) is
    drawn at 1e-3. A progress bar shows on a terminal.
    """
    import sys
    from pathlib import Path

    from benchmarks.core.errors import UserError
    from nasbench_cli.figures.plotting import figures_for, parse_formats, plot_benchmark
    from nasbench_cli.figures.style import FigureOptions
    from nasbench_cli.results.files import load_many, parse_name_list, verify_against_data

    formats = parse_formats(format_text)
    options = FigureOptions(bands=bands, band_kind=band_kind, title=title, width_in=width_in)
    if suite_text is not None:
        if benchmark_text:
            raise UserError("--suite takes --algo and --indicator; --benchmark applies to a plain plot "
                            "(`nasbench plot RESULTS/TASK`)")
        return _plot_suite(results_dirs, suite_text, out_dir, formats, options, as_json, parse_name_list(algo_text),
                           indicator)
    order = parse_name_list(algo_text)
    results = load_many(results_dirs, expand_benchmarks(benchmark_text), order)
    if order:      # the legends list the runs in the order asked for
        for benchmark in results.benchmarks:
            runs = results.runs[benchmark]
            results.runs[benchmark] = {label: runs[label] for label in order if label in runs}
    verify_against_data(results)
    if indicator != "hv":
        from nasbench_cli.results.indicators import with_indicator

        results = with_indicator(results, indicator)
    out = Path(out_dir) if out_dir else Path(results_dirs[0]) / "figures"
    several = len(results.benchmarks) >= 2
    total = sum(len(figures_for(results.runs[b])) for b in results.benchmarks) + several
    written = []
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]figures"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[name]}"), disable=as_json or not sys.stderr.isatty(),
                  transient=True, console=_stderr_console()) as progress:
        task = progress.add_task("", total=total, name="")

        def step(name):
            progress.update(task, completed=len(written) // max(len(formats), 1), name=name)

        for benchmark in results.benchmarks:
            written += plot_benchmark(benchmark, results.runs[benchmark], out, formats, options, progress=step)
        cd = None
        if several:
            step("critical-difference")
            cd, cd_files, skipped = _critical_difference(results.runs, out, formats, options)
            written += cd_files
        progress.update(task, completed=total)
    if as_json:
        echo_json({"files": [str(p) for p in written], **({"critical_difference": cd} if cd else {})})
        return
    for path in written:
        click.echo(str(path))
    if several and cd is None:
        click.echo(f"note: no critical-difference diagram: {skipped}", err=True)


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def _critical_difference(runs, out, formats, options):
    """(the statistics, files written, why skipped): the diagram across the benchmarks in `runs`."""
    import matplotlib.pyplot as plt

    from benchmarks.core.errors import UserError
    from nasbench_cli.figures.critical_difference import cd_figure
    from nasbench_cli.figures.plotting import save_figure
    from nasbench_cli.figures.style import _rc
    from nasbench_cli.results.critical_difference import critical_difference

    try:
        result = critical_difference(runs)
    except UserError as why:
        return None, [], str(why)
    with _rc():
        fig = cd_figure(result, options)
        try:
            return result, save_figure(fig, out / "critical-difference", formats), ""
        finally:
            plt.close(fig)


def _plot_suite(results_dirs, suite_text, out_dir, formats, options, as_json, only=None, indicator="hv"):
    """`plot --suite`: the aggregate figure and the critical-difference diagram of a suite's results."""
    from pathlib import Path

    import matplotlib.pyplot as plt

    from benchmarks.core.errors import UserError
    from nasbench_cli.figures.critical_difference import cd_figure
    from nasbench_cli.figures.plotting import save_figure
    from nasbench_cli.figures.style import _rc
    from nasbench_cli.figures.suite import aggregate_figure
    from nasbench_cli.results.suite_report import suite_report
    from nasbench_cli.suites.definition import load_suite

    if len(results_dirs) != 1:
        raise UserError("--suite reads one results folder (the --out of `run --suite`)")
    suite = load_suite(suite_text)
    data = suite_report(suite, results_dirs[0], only, indicator)
    out = Path(out_dir) if out_dir else Path(results_dirs[0]) / "figures"
    written = []
    with _rc():
        fig = aggregate_figure(data, options)
        written += save_figure(fig, out / f"{suite.name}-iqm", formats)
        plt.close(fig)
        for key, stem in (("critical_difference", f"{suite.name}-critical-difference"),
                          ("critical_difference_all_tasks", f"{suite.name}-critical-difference-all-tasks")):
            if data[key]:
                fig = cd_figure(data[key], options)
                written += save_figure(fig, out / stem, formats)
                plt.close(fig)
    if as_json:
        echo_json({"files": [str(p) for p in written], "notes": data["notes"]})
    else:
        for path in written:
            click.echo(f"wrote {path}")
        for note in data["notes"]:            # what `report --suite` says of the same folder
            click.echo(f"note: {note}", err=True)
