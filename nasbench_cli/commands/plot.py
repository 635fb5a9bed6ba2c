"""`nasbench plot`: the paper's figures from a results folder."""
import click

from nasbench_cli.commands.options import echo_json, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Folder for the figures (default: the first RESULTS_DIR/figures).")
@click.option("--format", "format_text", default="png,pdf", show_default=True,
              help="Comma list of file formats: png (150 dpi), pdf, svg.")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list).")
@click.option("--algo", "algo_text", default=None, help="Only these algorithms (comma list).")
@json_option
def plot(results_dirs, out_dir, format_text, benchmark_text, algo_text, as_json):
    """Draw three figures per benchmark from the trial files of `nasbench run`.

    \b
    <benchmark>-regret-vs-time   mean regret (95% t-band) vs simulated hours, log-log
    <benchmark>-final-regret-cdf CDF of the final regret of every trial (paper's Fig. 12)
    <benchmark>-mean-rank        mean rank among algorithms over simulated time

    Trajectories are step functions of simulated time aggregated on a common log-spaced grid; a
    trial counts from its first incumbent on. Regret below 1e-3 (including 0) is drawn at 1e-3.
    """
    from pathlib import Path

    from nasbench_cli.figures.plotting import parse_formats, plot_benchmark
    from nasbench_cli.results.files import load_many, parse_name_list, verify_against_data

    formats = parse_formats(format_text)
    results = load_many(results_dirs, parse_name_list(benchmark_text), parse_name_list(algo_text))
    verify_against_data(results)
    out = Path(out_dir) if out_dir else Path(results_dirs[0]) / "figures"
    written = []
    for benchmark in results.benchmarks:
        written += plot_benchmark(benchmark, results.runs[benchmark], out, formats)
    if as_json:
        echo_json({"files": [str(p) for p in written]})
    else:
        for path in written:
            click.echo(str(path))
