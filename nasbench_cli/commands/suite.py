"""`nasbench suite list|show`: the shipped suites (dev, test, smoke) and user suite files."""
import click

from nasbench_cli.commands.options import echo_json, json_option


@click.group()
def suite():
    """Suites: named, versioned lists of tasks (benchmark, objectives, constraints, budget, workers).

    `dev` is for tuning and developing algorithms, `test` holds the tasks where claims are made (the two
    partition every task nasbench has, by the rule `suite show dev` prints), `smoke` is sized for CI. Run
    one with `nasbench run --suite NAME --algo ...`, compare with `nasbench report --suite NAME DIR`.
    Your own suite is a TOML file (`suite show --help`)."""


@suite.command("list")
@json_option
def list_suites(as_json):
    """The shipped suites, with their task counts."""
    from nasbench_cli.suites.definition import shipped

    suites = shipped()
    if as_json:
        echo_json({name: {"version": s.version, "tasks": len(s.tasks), "description": s.description}
                   for name, s in suites.items()})
        return
    for name, s in suites.items():
        click.echo(f"{name:<6} v{s.version}  {len(s.tasks):>3} tasks  {s.description}")


@suite.command("show")
@click.argument("name", metavar="NAME|FILE.toml")
@json_option
def show(name, as_json):
    """A suite's tasks and the rule that made it; for a suite file, also a check of every task (the
    checks `run` makes of its options). A suite file (TOML):

    \b
        name = "mine"
        [[task]]
        benchmark = "ptb"
        objectives = ["logppl", "params"]    # optional
        constraints = ["params<=6e6"]        # optional
        budget = 300                         # optional: the benchmark's clock units
        workers = 4                          # optional: 1-1024
    """
    from nasbench_cli.suites.definition import load_suite, task_count

    s = load_suite(name)
    tasks = [{"task": t.name, "benchmark": t.benchmark, "kind": t.kind, "objectives": list(t.objectives),
              "constraints": list(t.constraints), "budget": t.budget, "workers": t.workers} for t in s.tasks]
    if as_json:
        echo_json({"suite": s.name, "version": s.version, "description": s.description, "rule": s.rule,
                   "tasks": tasks})
        return
    count = task_count(len(s.tasks))
    click.echo(f"{s.name} v{s.version}: {s.description} ({count})" if s.description else f"{s.name} v{s.version} ({count})")
    if s.rule:
        click.echo(f"rule: {s.rule}")
    for t in tasks:
        budget = "default budget" if t["budget"] is None else f"budget {t['budget']:g}"
        click.echo(f"  {t['task']:<40} {t['kind']:<17} {budget}" + (f", {t['workers']} workers" if t["workers"] != 1 else ""))
