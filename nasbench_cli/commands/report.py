"""`nasbench report`: the comparison table of final regrets."""
import click

from nasbench_cli.commands.options import echo_json, expand_benchmarks, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--suite", "suite_text", default=None, metavar="NAME|FILE.toml",
              help="Aggregate a suite's results (RESULTS_DIR as given to `run --suite --out`): normalised regret "
                   "per task, mean and IQM across tasks with stratified-bootstrap 95% intervals, mean rank, "
                   "probability of improvement over rs (or --versus), the critical-difference diagram's ranks, overtuning; with "
                   "--algo, among those algorithms only.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print GitHub Markdown tables (for a README).")
@click.option("--per-task", "per_task", is_flag=True,
              help="With --suite: also a table of each task's mean normalised regret per algorithm (the lowest "
                   "marked), for an appendix; --json always holds it (`per_task`, with the mean final regret in "
                   "each task's own unit).")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list, or a family: nmt).")
@click.option("--algo", "algo_text", default=None, help="Only these algorithms (comma list).")
@click.option("--versus", "versus", default=None, metavar="LABEL",
              help="With --suite: the algorithm the probability of improvement is against, P(row < LABEL) over the "
                   "tasks both ran (default rs, the required reference; e.g. your algorithm against optuna).")
@click.option("--wide", is_flag=True, help="Every column on the terminal (about 135 characters; default fits 100).")
@click.option("--indicator", type=click.Choice(["hv", "hv-range", "igd+"]), default="hv", show_default=True,
              help="Multi-objective runs: what the table compares. hv: HV regret normalised to the true front "
                   "(recorded); hv-range: HV regret over the table's whole range, reference at its worst values "
                   "(informative from the first architecture); igd+: IGD+ in that space. The caption names it.")
@json_option
@click.option("--at", "at_text", default=None, metavar="TIMES",
              help="Also report at these points of the benchmark's clock, e.g. 10h,100h (gpt-*: evaluations, "
                   "e.g. 25,50): the results as they stood then.")
def report(results_dirs, as_markdown, benchmark_text, algo_text, wide, indicator, as_json, at_text=None,
           suite_text=None, per_task=False, versus=None):
    """Compare algorithms by final regret, per benchmark, from the trial files of `nasbench run`.

    Columns: trials; mean final regret (test log-perplexity - L*) with a 95% t-interval; median;
    share of trials ending on the best architecture; mean simulated hours to regret <= 0.1 and
    <= 0.05 (share that got there); CPU seconds per trial; a two-sided Mann-Whitney U test against
    the algorithm with the lowest mean (Holm-corrected p-value).

    Several RESULTS_DIRs are compared side by side (their labels must differ: see `run --label`).
    --at 10h,100h adds one table per time: every trial cut at that simulated time.
    """
    from benchmarks.core.errors import UserError
    from nasbench_cli.results.report_table import build_report, markdown, print_rich
    from nasbench_cli.results.files import load_many, parse_name_list, verify_against_data

    if as_json and as_markdown:
        raise UserError("choose one of --json and --markdown")
    if per_task and suite_text is None:
        raise UserError("--per-task is a table of a suite's tasks: give --suite NAME (a plain report is per "
                        "benchmark already)")
    if versus is not None and not versus.strip():
        raise UserError("--versus needs an algorithm's label, e.g. --versus optuna")
    if versus is not None and suite_text is None:
        raise UserError("--versus compares algorithms across a suite's tasks: give --suite NAME (a plain report "
                        "tests every algorithm against the best by mean)")
    if suite_text is not None:
        if benchmark_text or at_text:
            raise UserError("--suite takes --algo, --indicator, --json and --markdown; --benchmark and --at apply "
                            "to a plain report (`nasbench report RESULTS/TASK`)")
        return _suite_report(results_dirs, suite_text, as_json, parse_name_list(algo_text), as_markdown, indicator,
                             per_task, versus.strip() if versus else "rs")
    results = load_many(results_dirs, expand_benchmarks(benchmark_text), parse_name_list(algo_text))
    verify_against_data(results)
    if indicator != "hv":
        from nasbench_cli.results.indicators import with_indicator

        results = with_indicator(results, indicator)      # curves too: --at cuts them
    from nasbench_cli.results.truncate import parse_hours, results_at

    hours = parse_hours(at_text) if at_text else []
    data = build_report(results)
    from nasbench_cli.results.aggregate import clock_short

    suffix = clock_short(results.benchmarks[0]) if results.benchmarks else "h"
    at = {f"{h:g}{suffix}": build_report(results_at(results, at=h)) for h in hours}
    if as_json:
        echo_json({**data, "at": at} if at else data)
        return
    for table in [*at.values(), data]:
        if as_markdown:
            click.echo(markdown(table), nl=False)
            click.echo()
        else:
            print_rich(table, wide=wide)


def _suite_report(results_dirs, suite_text, as_json, only=None, as_markdown=False, indicator="hv", per_task=False,
                  versus="rs"):
    from benchmarks.core.errors import UserError
    from nasbench_cli.results.report_table import json_ready
    from nasbench_cli.results.suite_report import suite_report
    from nasbench_cli.suites.definition import load_suite, task_count

    if len(results_dirs) != 1:
        raise UserError("--suite reads one results folder (the --out of `run --suite`)")
    suite = load_suite(suite_text)
    data = suite_report(suite, results_dirs[0], only, indicator, versus)
    if as_json:
        echo_json(json_ready(data))
        return
    if as_markdown:
        click.echo(suite_markdown(data), nl=False)
        if per_task:
            click.echo()
            click.echo(per_task_markdown(data), nl=False)
        return
    click.echo(f"suite {data['suite']} v{data['version']}: {task_count(len(data['tasks']))}; normalised regret "
               f"({data['normalisation']}), lower is better")
    width = max([12, *map(len, data["algorithms"])])       # a long label (a plugin's, a variant's) keeps its columns
    click.echo(f"{'algorithm':<{width}} {'tasks':>5} {'trials':>6}  {'IQM':>6} {'95% CI':>15}  {'mean':>6} {'95% CI':>15}  "
               f"{'mean rank':>9}  {_p_header(data):>7}")
    for label in _by_iqm(data):
        row = data["algorithms"][label]
        p = row.get("p_improvement")
        click.echo(f"{label:<{width}} {row['tasks']:>5} {row['trials']:>6}  {row['iqm']:6.3f} "
                   f"{row['iqm_ci95'][0]:7.3f}-{row['iqm_ci95'][1]:<7.3f}  {row['mean']:6.3f} "
                   f"{row['mean_ci95'][0]:7.3f}-{row['mean_ci95'][1]:<7.3f}  {row['mean_rank']:9.2f}  "
                   + ("      -" if p is None else f"{p:7.2f}"))
    anytime = data["anytime"]
    click.echo("anytime: IQM of normalised regret (mean rank) with every trial cut at a share of its budget")
    click.echo(f"{'algorithm':<{width}} " + " ".join(f"{f:>13.0%}" for f in anytime["fractions"]))
    for label in [name for name in _by_iqm(data) if name in anytime["iqm"]]:
        click.echo(f"{label:<{width}} " + " ".join("            -" if v is None else f"{v:6.3f} ({r:4.2f})"
                                             for v, r in zip(anytime["iqm"][label], anytime["mean_rank"][label])))
    for line in _findings(data):
        click.echo(line)
    if per_task:
        _echo_per_task(data)
    for note in data["notes"]:
        click.echo(f"note: {note}")


def _p_header(data: dict) -> str:
    """The probability-of-improvement column's title: P(< the label it is against)."""
    return f"P(< {data['versus']})"


def _by_iqm(data: dict) -> list:
    """The suite report's algorithms, lowest IQM first (the order of every table)."""
    return sorted(data["algorithms"], key=lambda name: data["algorithms"][name]["iqm"])


def _findings(data: dict) -> list[str]:
    """The critical-difference results and overtuning of a suite report, a sentence each (lower case)."""
    from nasbench_cli.suites.definition import task_count

    lines = []
    for cd, what in ((data["critical_difference"], f"the {task_count(len(data['cd_tasks']))} every algorithm ran"),
                     (data["critical_difference_all_tasks"], "all tasks, the algorithms that ran each")):
        if cd:
            ranked = sorted(cd["mean_rank"].items(), key=lambda item: item[1])
            lines.append(f"critical difference over {what} ({cd['blocks']} blocks): Friedman p = "
                         f"{cd['friedman_p']:.3g}, CD = {cd['cd']:.2f}; mean ranks "
                         + ", ".join(f"{label} {rank:.2f}" for label, rank in ranked))
    for task, rows in data["overtuning"].items():
        lines.append(f"overtuning on {task}: " + "; ".join(
            f"{label} validation regret {r['val_regret']:.4f} vs test {r['test_regret']:.4f}, best-by-validation not "
            f"best-by-test in {r['not_best_by_test']:.0%}" for label, r in rows.items()))
    return lines


def suite_markdown(data: dict) -> str:
    """`report --suite --markdown`: the aggregate table and the anytime table as GitHub Markdown, then the
    critical-difference results, overtuning and notes as a list (for a paper's appendix or a README)."""
    from nasbench_cli.suites.definition import task_count

    order = _by_iqm(data)
    lines = [f"Suite `{data['suite']}` v{data['version']}, {task_count(len(data['tasks']))}; normalised regret "
             f"({data['normalisation']}), lower is better; 95% stratified-bootstrap intervals.", "",
             f"| algorithm | tasks | trials | IQM (95% CI) | mean (95% CI) | mean rank | {_p_header(data)} |",
             "| --- | ---: | ---: | --- | --- | ---: | ---: |"]
    for label in order:
        row = data["algorithms"][label]
        p = row.get("p_improvement")
        lines.append(f"| {label} | {row['tasks']} | {row['trials']} | {row['iqm']:.3f} ({row['iqm_ci95'][0]:.3f}–"
                     f"{row['iqm_ci95'][1]:.3f}) | {row['mean']:.3f} ({row['mean_ci95'][0]:.3f}–{row['mean_ci95'][1]:.3f})"
                     f" | {row['mean_rank']:.2f} | {'–' if p is None else f'{p:.2f}'} |")
    anytime = data["anytime"]
    lines += ["", "IQM of normalised regret (mean rank) with every trial cut at a share of its budget:", "",
              "| algorithm | " + " | ".join(f"{f:.0%}" for f in anytime["fractions"]) + " |",
              "| --- |" + " ---: |" * len(anytime["fractions"])]
    for label in [name for name in order if name in anytime["iqm"]]:
        lines.append(f"| {label} | " + " | ".join("–" if v is None else f"{v:.3f} ({r:.2f})" for v, r in
                                                 zip(anytime["iqm"][label], anytime["mean_rank"][label])) + " |")
    items = [line[0].upper() + line[1:] for line in _findings(data)] + [f"Note: {note}" for note in data["notes"]]
    if items:
        lines += [""] + [f"- {item}" for item in items]
    return "\n".join(lines) + "\n"


def _per_task_rows(data: dict):
    """(labels in the aggregate table's order, [(task, {label: cell text}, lowest label)])."""
    rows = []
    for task, cells in data["per_task"].items():
        lowest = min(cells, key=lambda label: cells[label]["mean"])
        most = max(cell["trials"] for cell in cells.values())
        rows.append((task, {label: f"{cell['mean']:.3f}" + (f" ({cell['trials']})" if cell["trials"] != most else "")
                            for label, cell in cells.items()}, lowest))
    return _by_iqm(data), rows


def _echo_per_task(data: dict) -> None:
    order, rows = _per_task_rows(data)
    width = max(len(task) for task, _, _ in rows)
    click.echo("per task: mean normalised regret (* the lowest; trials in brackets where fewer than the task's most)")
    column = {label: max(12, len(label)) for label in order}
    click.echo(f"{'task':<{width}} " + " ".join(f"{label:>{column[label]}}" for label in order))
    for task, cells, lowest in rows:
        click.echo(f"{task:<{width}} " + " ".join(
            f"{(cells[label] + ('*' if label == lowest else '')) if label in cells else '-':>{column[label]}}"
            for label in order))


def per_task_markdown(data: dict) -> str:
    """`report --suite --per-task --markdown`: each task's mean normalised regret per algorithm, the lowest in bold."""
    order, rows = _per_task_rows(data)
    lines = ["Mean normalised regret per task (lowest in bold; trials in brackets where fewer than the task's most):",
             "", "| task | " + " | ".join(order) + " |", "| --- |" + " ---: |" * len(order)]
    for task, cells, lowest in rows:
        lines.append(f"| {task} | " + " | ".join(
            ((f"**{cells[label]}**" if label == lowest else cells[label]) if label in cells else "–") for label in order) + " |")
    return "\n".join(lines) + "\n"
