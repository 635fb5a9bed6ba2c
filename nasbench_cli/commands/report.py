"""`nasbench report`: the comparison table of final regrets."""
import click

from nasbench_cli.commands.options import echo_json, expand_benchmarks, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--markdown", "as_markdown", is_flag=True, help="Print GitHub Markdown tables (for a README).")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list, or a family: nmt).")
@click.option("--algo", "algo_text", default=None, help="Only these algorithms (comma list).")
@click.option("--wide", is_flag=True, help="Every column on the terminal (about 135 characters; default fits 100).")
@json_option
@click.option("--at", "at_text", default=None, metavar="TIMES",
              help="Also report at these points of the benchmark's clock, e.g. 10h,100h (gpt-*: evaluations, "
                   "e.g. 25,50): the results as they stood then.")
def report(results_dirs, as_markdown, benchmark_text, algo_text, wide, as_json, at_text=None):
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
    results = load_many(results_dirs, expand_benchmarks(benchmark_text), parse_name_list(algo_text))
    verify_against_data(results)
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
