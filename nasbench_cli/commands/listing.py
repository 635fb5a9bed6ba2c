"""`nasbench list`: the algorithms and benchmarks nasbench knows."""
import click

from nasbench_cli.commands.options import echo_json, json_option


# where a default differs from the NAS-Bench-NLP release (README: "Differences from the release")
RELEASE_DIFFERENCES = {
    "environment": "training to E epochs charges and shows epochs 1..E; the release charges sum(wall_times[:E']) "
                   "with E' = min(E, n-1) and shows epochs 1..E'+1 (one unpaid epoch; a log's last epoch is "
                   "never charged); on an exact validation tie the release keeps the first seen, nasbench the "
                   "lower row",
    "hb": "bracket_budget_epochs None -> B = (s_max+1) R = 200 epochs, brackets repeat until the budget, new "
          "architectures without replacement over the trial; the release's notebook: B = 100 R / 3.5, each "
          "bracket drawn independently, one pass (= hb-release)",
    "protocol": "1000 simulated hours x 30 trials per algorithm; the release's notebook: fixed counts (100 "
                "architectures for RS-50E, 500 for RS-10E, one Hyperband pass, 130 for BO and RE) x 5 seeds",
}


@click.command("list")
@json_option
def list_cmd(as_json):
    """List algorithms (built-in, then plugins installed under the entry-point group
    `nasbench.optimizers`) and benchmarks, one line each. Any class derived from nasbench's Algorithm
    also runs as --algo module:Class or --algo path/to/file.py:Class."""
    from benchmarks.core.catalog import BENCHMARKS
    from benchmarks.core.errors import UserError
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
                   "settings": {n: _default_settings(n) for n in names},
                   "differences_from_release": RELEASE_DIFFERENCES,
                   "benchmarks": {n: s.description for n, s in BENCHMARKS.items()}})
        return
    click.echo("algorithms (--algo NAME, a comma list, 'all' = the paper's eight, 'proxy' = prs,phb, "
               "'libs' = optuna,dehb,smac-mf; on bert, gpt-*, nmt-* and lora-* 'all' = rs,bo,re,tpe,smac, 'libs' = optuna):")
    width = max(len(n) for n in names)
    for name in names:
        click.echo(f"  {name:<{width}} {ALGORITHMS[name][0]}")
    if plugins:
        click.echo("plugins (installed packages, entry-point group nasbench.optimizers):")
        for name, p in plugins.items():
            origin = f"{p['distribution']} {p['version']}" if p["distribution"] else p["target"]
            click.echo(f"  {name:<8} {p['description']} [{origin}]")
    click.echo("  also: --algo module:Class or --algo path/to/file.py:Class (a class derived from nasbench.Algorithm)")
    click.echo("benchmarks (--benchmark NAME):")
    for name, spec in BENCHMARKS.items():
        click.echo(f"  {name:<8} {spec.description}")


def _default_settings(name: str) -> dict:
    """An algorithm's default settings, without importing the library it drives (listing works whether
    or not optional extras such as syne-tune or DEHB are installed)."""
    import dataclasses

    from optimizers.registry import algorithm_class

    return dataclasses.asdict(algorithm_class(name).Settings())
