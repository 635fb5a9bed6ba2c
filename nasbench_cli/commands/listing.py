"""`nasbench list`: the algorithms and benchmarks nasbench knows."""
import click

from nasbench_cli.options import echo_json, json_option


@click.command("list")
@json_option
def list_cmd(as_json):
    """List algorithms (built-in, then plugins installed under the entry-point group
    `nasbench.optimizers`) and benchmarks, one line each. Any class derived from nasbench's Algorithm
    also runs as --algo module:Class or --algo path/to/file.py:Class."""
    from benchmarks.catalog import BENCHMARKS
    from benchmarks.errors import UserError
    from optimizers.plugins import entry_points
    from optimizers.registry import ALGORITHMS, algorithm_class, available, plugin_names

    names = available()
    points = entry_points()
    plugins = {}
    for name in plugin_names():
        point = points[name]
        dist = getattr(point, "dist", None)
        try:
            description = getattr(algorithm_class(name), "description", "") or "(no description)"
        except UserError as error:
            description = f"(fails to load: {error})"
        plugins[name] = {"description": description, "target": point.value,
                         "distribution": dist.name if dist else None, "version": dist.version if dist else None}
    if as_json:
        echo_json({"algorithms": {n: ALGORITHMS[n][0] for n in names}, "plugins": plugins,
                   "benchmarks": {n: s.description for n, s in BENCHMARKS.items()}})
        return
    click.echo("algorithms (--algo NAME, a comma list, 'all' = the paper's eight, 'proxy' = prs,phb, "
               "'libs' = optuna,dehb,smac-mf):")
    for name in names:
        click.echo(f"  {name:<8} {ALGORITHMS[name][0]}")
    if plugins:
        click.echo("plugins (installed packages, entry-point group nasbench.optimizers):")
        for name, p in plugins.items():
            origin = f"{p['distribution']} {p['version']}" if p["distribution"] else p["target"]
            click.echo(f"  {name:<8} {p['description']} [{origin}]")
    click.echo("  also: --algo module:Class or --algo path/to/file.py:Class (a class derived from nasbench.Algorithm)")
    click.echo("benchmarks (--benchmark NAME):")
    for name, spec in BENCHMARKS.items():
        click.echo(f"  {name:<8} {spec.description}")
