"""`nasbench list`: the algorithms and benchmarks nasbench knows."""
import click

from nasbench_cli.options import echo_json, json_option


@click.command("list")
@json_option
def list_cmd(as_json):
    """List algorithms and benchmarks, one line each."""
    from benchmarks.catalog import BENCHMARKS
    from optimizers.registry import ALGORITHMS, available

    names = available()
    if as_json:
        echo_json({"algorithms": {n: ALGORITHMS[n][0] for n in names},
                   "benchmarks": {n: s.description for n, s in BENCHMARKS.items()}})
        return
    click.echo("algorithms (--algo NAME, a comma list, 'all' = the paper's eight, 'proxy' = prs,phb):")
    for name in names:
        click.echo(f"  {name:<8} {ALGORITHMS[name][0]}")
    click.echo("benchmarks (--benchmark NAME):")
    for name, spec in BENCHMARKS.items():
        click.echo(f"  {name:<8} {spec.description}")
