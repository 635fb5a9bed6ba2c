"""`nasbench analyze`: analyses of the benchmark (feature quality, training-free proxies).

Subcommands live in their own modules and load on demand, like the top-level commands.
"""
import click

from nasbench_cli.main import LazyGroup

# name -> "module:attribute"; a module that does not exist (yet) is simply not listed.
ANALYZE_COMMANDS = {
    "features": "nasbench_cli.commands.analyze_features:features",
    "proxies": "nasbench_cli.commands.analyze_proxies:proxies",
}


@click.group(cls=LazyGroup, lazy_commands=ANALYZE_COMMANDS)
def analyze():
    """Analyses of the benchmark: how informative the features are, how well proxies rank."""
