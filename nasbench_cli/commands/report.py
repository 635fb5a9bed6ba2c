"""`nasbench report`: the comparison table of final regrets."""
import click

from nasbench_cli.options import echo_json, json_option


@click.command()
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=str))
@click.option("--markdown", "as_markdown", is_flag=True, help="Print GitHub Markdown tables (for a README).")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list).")
@click.option("--algo", "algo_text", default=None, help="Only these algorithms (comma list).")
@click.option("--wide", is_flag=True, help="Every column on the terminal (about 135 characters; default fits 100).")
@json_option
def report(results_dir, as_markdown, benchmark_text, algo_text, wide, as_json):
    """Compare algorithms by final regret, per benchmark, from the trial files of `nasbench run`.

    Columns: trials; mean final regret (test log-perplexity - L*) with a 95% t-interval; median;
    share of trials ending on the best architecture; mean simulated hours to regret <= 0.1 and
    <= 0.05 (share that got there); CPU seconds per trial; a two-sided Mann-Whitney U test against
    the algorithm with the lowest mean (Holm-corrected p-value).
    """
    from benchmarks.errors import UserError
    from nasbench_cli.report_table import build_report, markdown, print_rich
    from nasbench_cli.results_io import load_results, parse_name_list, verify_against_data

    if as_json and as_markdown:
        raise UserError("choose one of --json and --markdown")
    results = load_results(results_dir, parse_name_list(benchmark_text), parse_name_list(algo_text))
    verify_against_data(results)
    data = build_report(results)
    if as_json:
        echo_json(data)
    elif as_markdown:
        click.echo(markdown(data), nl=False)
    else:
        print_rich(data, wide=wide)
