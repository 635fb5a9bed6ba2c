"""`nasbench analyze table2|metrics|fidelity|transfer`: the NAS-Bench-NLP paper's analyses of its data."""
import click

from nasbench_cli.commands.options import cell_benchmark_option, data_dir_option, echo_json, json_option
from nasbench_cli.figures.plotting import parse_formats

figures_option = click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str),
                              default="figures/analyses", show_default=True, help="Folder for the figures.")
format_option = click.option("--format", "format_text", default="png,pdf", show_default=True,
                             help="Comma list of figure formats: png (150 dpi), pdf, svg.")


def _echo_written(written, as_json) -> None:
    if not as_json:
        for path in written:
            click.echo(f"wrote {path}")


@click.command()
@cell_benchmark_option
@click.option("--top", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Generated cells listed.")
@data_dir_option
@json_option
def table2(benchmark_name, top, data_dir, as_json):
    """The paper's Table 2: LSTM, GRU, RNN and the best generated cells by test perplexity.

    Test perplexity is the lowest over the 50 epochs, as in the paper (LSTM 78.5, GRU 86.1, RNN 135.1);
    only architectures that trained all 50 epochs with finite losses count.
    """
    from benchmarks.cells.paper_analyses import table2 as compute
    from benchmarks.core.registry import load_benchmark

    report = compute(load_benchmark(benchmark_name, data_dir), top)
    if as_json:
        echo_json(report)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{benchmark_name}: test perplexity (lowest over 50 epochs), paper's Table 2")
    for column, justify in (("cell", "left"), ("id", "right"), ("parameters", "right"),
                            ("test perplexity", "right"), ("paper", "right")):
        table.add_column(column, justify=justify)
    for name, row in report["baselines"].items():
        table.add_row(name.upper(), str(row["id"]), f"{row['num_params']:,}", f"{row['test_perplexity']:.1f}",
                      f"{row['paper_test_perplexity']:.1f}")
    for rank, row in enumerate(report["top_generated"], 1):
        table.add_row(f"generated #{rank}", str(row["id"]), f"{row['num_params']:,}",
                      f"{row['test_perplexity']:.1f}", "")
    console = Console()
    console.print(table)
    beating = report["generated_beating"]
    console.print(f"of {report['generated_cells']:,} complete generated cells, {beating['lstm']} beat the LSTM, "
                  f"{beating['gru']} beat the GRU and {beating['rnn']:,} beat the RNN")


@click.command()
@cell_benchmark_option
@figures_option
@format_option
@data_dir_option
@json_option
def metrics(benchmark_name, out_dir, format_text, data_dir, as_json):
    """The paper's Fig. 4: parameters vs training time vs best test perplexity, with correlations.

    The paper says there is no clear correlation between an architecture's parameters or training time
    and its perplexity; this prints that as numbers (Spearman rho; Pearson r on logarithms).
    """
    from benchmarks.cells.paper_analyses import metrics as compute
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.figures.paper import metrics_figure

    formats = parse_formats(format_text)
    benchmark = load_benchmark(benchmark_name, data_dir)
    report = compute(benchmark)
    written = metrics_figure(benchmark, report, out_dir, formats)
    summary = {k: v for k, v in report.items() if k != "values"} | {"figures": [str(p) for p in written]}
    if as_json:
        echo_json(summary)
        return
    click.echo(f"{benchmark_name}: {report['architectures']:,} complete architectures")
    for pair, values in report["correlations"].items():
        click.echo(f"  {pair:<40} Spearman rho {values['spearman_rho']:+.3f}   Pearson r (logs) "
                   f"{values['pearson_r']:+.3f}")
    quantiles = report["best_test_perplexity_quantiles"]
    click.echo("  best test perplexity quantiles: " + ", ".join(f"{k} {v:.1f}" for k, v in quantiles.items()))
    _echo_written(written, as_json)


@click.command()
@cell_benchmark_option
@click.option("--epochs", "epochs_text", default="1,3,5,10,25,50", show_default=True,
              help="Epochs whose validation perplexity is ranked.")
@figures_option
@format_option
@data_dir_option
@json_option
def fidelity(benchmark_name, epochs_text, out_dir, format_text, data_dir, as_json):
    """The paper's Fig. 5: how well validation perplexity after few epochs ranks the final test perplexity.

    Kendall tau-b and Spearman rho over the architectures that trained all 50 epochs; this rank agreement
    is what makes early stopping (Hyperband, ASHA) work on this benchmark.
    """
    from benchmarks.core.errors import UserError
    from benchmarks.cells.paper_analyses import fidelity as compute
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.figures.paper import fidelity_figure

    formats = parse_formats(format_text)
    benchmark = load_benchmark(benchmark_name, data_dir)
    try:
        epochs = [int(e) for e in epochs_text.split(",") if e.strip()]
    except ValueError:
        raise UserError(f"--epochs expects comma-separated integers, got {epochs_text!r}") from None
    if not epochs or not all(1 <= e <= benchmark.search.max_epochs for e in epochs):
        raise UserError(f"--epochs must be between 1 and {benchmark.search.max_epochs}, got {epochs_text!r}")
    report = compute(benchmark, epochs)
    written = fidelity_figure(benchmark, report, out_dir, formats)
    if as_json:
        echo_json(report | {"figures": [str(p) for p in written]})
        return
    click.echo(f"{benchmark_name}: validation perplexity at epoch E vs final test perplexity "
               f"({report['architectures']:,} architectures)")
    click.echo(f"  {'epoch':>5}  {'Kendall tau':>11}  {'Spearman rho':>12}")
    for epoch, values in report["epochs"].items():
        click.echo(f"  {epoch:>5}  {values['kendall_tau']:>11.3f}  {values['spearman_rho']:>12.3f}")
    _echo_written(written, as_json)


@click.command()
@click.option("--benchmark", "family", type=click.Choice(["cells", "nmt"], case_sensitive=False), default="cells",
              show_default=True, help="cells: PTB vs WikiText-2 (the paper's Fig. 6); nmt: every two NMTHPO "
                                      "language pairs, over the configurations both trained.")
@figures_option
@format_option
@data_dir_option
@json_option
def transfer(family, out_dir, format_text, data_dir, as_json):
    """Transfer between tasks: the paper's Fig. 6 (best test log-perplexity on PTB vs WikiText-2 for the
    architectures in both), or with --benchmark nmt the Kendall tau of dev BLEU and of decode time between
    every two translation pairs over their shared configurations."""
    from benchmarks.cells.paper_analyses import transfer as compute
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.figures.paper import transfer_figure

    formats = parse_formats(format_text)
    if family.lower() == "nmt":
        return _nmt_transfer(out_dir, formats, data_dir, as_json)
    report = compute(load_benchmark("ptb", data_dir), load_benchmark("wt2", data_dir))
    written = transfer_figure(report, out_dir, formats)
    if as_json:
        echo_json({k: v for k, v in report.items() if k not in ("ptb_test_logppl", "wt2_test_logppl")}
                  | {"figures": [str(p) for p in written]})
        return
    click.echo(f"PTB vs WikiText-2, {report['architectures']} architectures complete on both (matched by id): "
               f"Pearson r {report['pearson_r']:.3f}, Spearman rho {report['spearman_rho']:.3f}, "
               f"Kendall tau {report['kendall_tau']:.3f}")
    _echo_written(written, as_json)


def _nmt_transfer(out_dir, formats, data_dir, as_json):
    import math

    from benchmarks.core.catalog import FAMILIES
    from benchmarks.core.registry import load_benchmark
    from benchmarks.nmt.transfer import PAIR_METRICS, transfer as compute
    from nasbench_cli.figures.paper import nmt_transfer_figure

    report = compute([load_benchmark(name, data_dir) for name in FAMILIES["nmt"]])
    written = nmt_transfer_figure(report, out_dir, formats)
    if as_json:
        echo_json({"pairs": report["pairs"],
                   "metrics": {m: {"kendall_tau": [[None if math.isnan(v) else v for v in row] for row in d["tau"]],
                                   "shared": d["shared"]} for m, d in report["metrics"].items()},
                   "figures": [str(p) for p in written]})
        return
    names = [n[4:] for n in report["pairs"]]
    for metric, title in PAIR_METRICS.items():
        data = report["metrics"][metric]
        click.echo(f"Kendall tau of {title} between pairs (shared configurations in brackets; - : fewer than 3)")
        click.echo(" " * 7 + "".join(f"{n:>13}" for n in names))
        for i, name in enumerate(names):
            cells = ["" if i == j else ("-" if math.isnan(data["tau"][i][j]) else f"{data['tau'][i][j]:+.2f}")
                     + ("" if i == j else f" ({data['shared'][i][j]})") for j in range(len(names))]
            click.echo(f"{name:<7}" + "".join(f"{c:>13}" for c in cells))
    _echo_written(written, as_json)


@click.command()
@cell_benchmark_option
@click.option("--pairs", type=click.IntRange(2, 100_000), default=1000, show_default=True,
              help="Random pairs of architectures (seeded).")
@click.option("--time-limit", "time_limit_s", type=click.FloatRange(min=0, min_open=True), default=1.0,
              show_default=True, help="Seconds of NetworkX's GED search per pair (the release: 600).")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True)
@click.option("--jobs", type=click.IntRange(1), default=None,
              help="Processes (default: $NASBENCH_JOBS, else all cores).")
@figures_option
@format_option
@data_dir_option
@json_option
def sparsity(benchmark_name, pairs, time_limit_s, seed, jobs, out_dir, format_text, data_dir, as_json):
    """The paper's Fig. 7: graph-edit-distance upper bounds between random pairs of cells.

    The first run computes them (about pairs x time limit / cores seconds at most) and caches them; later
    runs with the same pairs, seed and limit read the cache.
    """
    from benchmarks.cells.graph_edit_distance import sparsity as compute
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.figures.paper import sparsity_figure
    from nasbench_cli.harness.cores import default_jobs

    formats = parse_formats(format_text)
    benchmark = load_benchmark(benchmark_name, data_dir)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("graph edit distances (cached after this run)"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), disable=as_json, transient=True) as bar:
        task = bar.add_task("", total=pairs)
        report = compute(benchmark, pairs, seed, time_limit_s, jobs or default_jobs(),
                         progress=lambda done, total: bar.update(task, completed=done))
    written = sparsity_figure(report, out_dir, formats)
    summary = {k: v for k, v in report.items() if k not in ("ids", "ged_upper_bound", "exact")}
    summary |= {"exact_pairs": sum(report["exact"]), "figures": [str(p) for p in written]}
    if as_json:
        echo_json(summary)
        return
    click.echo(f"{benchmark_name}: GED upper bounds of {pairs} random pairs ({time_limit_s:g} s each"
               f"{', from the cache' if report['cached'] else ''}): mean {report['mean']:.1f}, median "
               f"{report['median']:.1f}, range {report['min']:.0f}–{report['max']:.0f}; "
               f"{summary['exact_pairs']} exact")
    _echo_written(written, as_json)
