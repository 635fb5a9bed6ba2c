"""`nasbench analyze features`: the paper's feature-quality check (section 4.1) for each feature kind."""
import click

from nasbench_cli.commands.options import cell_benchmark_option, data_dir_option, echo_json, json_option

DEFAULT_KINDS = "shipped-10d,g2v-10d,g2v-50d"


def _parse_list(text: str, what: str, cast=str) -> list:
    try:
        items = [cast(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated {what}, got {text!r}") from None
    if not items:
        raise click.BadParameter(f"expected at least one of {what}")
    return items


@click.command()
@cell_benchmark_option
@click.option("--kinds", default=DEFAULT_KINDS, show_default=True,
              help="Comma-separated feature kinds to score (see `nasbench features info`).")
@click.option("--seeds", default="0,1,2,3,4", show_default=True,
              help="Comma-separated seeds: one random 50/50 split (and XGBoost seed) each.")
@click.option("--order-check", is_flag=True,
              help="Also retrain the release's embedding recipe with flawed cells first vs shuffled "
                   "(a few minutes): shows how much of the shipped features' flawed AUC is training order.")
@click.option("--order-epochs", type=click.IntRange(1, 200), default=10, show_default=True,
              help="Doc2Vec epochs of each --order-check training.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Also draw each kind's first two principal components coloured by test perplexity "
                   "(the paper's Fig. 8) into this folder.")
@click.option("--format", "format_text", default="png,pdf", show_default=True,
              help="Comma list of figure formats (with --out): png, pdf, svg.")
@data_dir_option
@json_option
def features(benchmark_name, kinds, seeds, order_check, order_epochs, out_dir, format_text, data_dir, as_json):
    """How informative each feature kind is: XGBoost on random 50/50 splits.

    Columns: ROC AUC of a classifier of flawed architectures (status != OK); R^2 of a regressor
    of the final test log-perplexity of OK architectures, overall and on those with
    log-perplexity <= 6 (fitted on that subset). Mean +- std over the splits, beside the
    paper's figures (obtained with its shipped 10-d features). g2v features are built if needed.

    The shipped features were trained with all flawed cells first in every epoch; --order-check
    measures how much that order alone lifts the flawed AUC.
    """
    from benchmarks.cells.feature_quality import METRICS, feature_quality, training_order_effect
    from benchmarks.core.features import check_kind
    from benchmarks.core.registry import load_benchmark

    kind_list = [check_kind(k) for k in _parse_list(kinds, "feature kinds")]
    seed_list = _parse_list(seeds, "integer seeds", int)
    benchmark = load_benchmark(benchmark_name, data_dir)
    written = []
    if out_dir is not None:
        from nasbench_cli.figures.paper import features_figure
        from nasbench_cli.figures.plotting import parse_formats

        written = [str(p) for p in features_figure(benchmark, kind_list, out_dir, parse_formats(format_text))]
    if as_json:
        report = feature_quality(benchmark, kind_list, seed_list)
        if order_check:
            report["order_check"] = training_order_effect(benchmark, order_epochs, seeds=seed_list)
        echo_json(report | ({"figures": written} if written else {}))
        return
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    with Progress(transient=True) as bar:
        task = bar.add_task("scoring", total=len(kind_list) * len(seed_list))

        def progress(kind, seed):
            bar.update(task, description=f"{kind} split {seed}", advance=1)

        report = feature_quality(benchmark, kind_list, seed_list, progress=progress)
    table = Table(title=f"feature quality on {benchmark.name} ({len(seed_list)} random 50/50 splits, XGBoost)")
    table.add_column("features")
    for metric in METRICS:
        table.add_column({"flawed_auc": "flawed AUC", "r2_all": "R² all OK",
                          "r2_le6": "R² loss ≤ 6"}[metric], justify="right")
    table.add_row("paper (shipped 10-d)", *[f"{report['paper'][m]:.3f}" for m in METRICS], style="dim")
    for kind, scores in report["kinds"].items():
        table.add_row(kind, *[f"{scores[m]['mean']:.3f} ± {scores[m]['std']:.3f}" for m in METRICS])
    console = Console()
    console.print(table)
    if order_check:
        with console.status(f"order check: two {order_epochs}-epoch trainings of the release's recipe"):
            check = training_order_effect(benchmark, order_epochs, seeds=seed_list)
        order_table = Table(title=f"training order effect: release recipe, {order_epochs} epochs, 10-d")
        order_table.add_column("document order")
        order_table.add_column("flawed AUC", justify="right")
        for name, auc in check["flawed_auc"].items():
            order_table.add_row(name, f"{auc['mean']:.3f} ± {auc['std']:.3f}")
        console.print(order_table)
    for path in written:
        console.print(f"wrote {path}")
