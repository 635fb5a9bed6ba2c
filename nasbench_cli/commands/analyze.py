"""`nasbench analyze`: analyses of the benchmark (the paper's, feature quality, training-free proxies).

Subcommands live in their own modules and load on demand, like the top-level commands.
"""
import click

from nasbench_cli.main import LazyGroup

# name -> "module:attribute"; a module that does not exist (yet) is simply not listed.
ANALYZE_COMMANDS = {
    "features": "nasbench_cli.commands.analyze_features:features",
    "proxies": "nasbench_cli.commands.analyze_proxies:proxies",
    "table2": "nasbench_cli.commands.analyze_paper:table2",
    "metrics": "nasbench_cli.commands.analyze_paper:metrics",
    "fidelity": "nasbench_cli.commands.analyze_paper:fidelity",
    "transfer": "nasbench_cli.commands.analyze_paper:transfer",
    "sparsity": "nasbench_cli.commands.analyze_paper:sparsity",
}


@click.group(cls=LazyGroup, lazy_commands=ANALYZE_COMMANDS)
def analyze():
    """Analyses of the benchmark: the paper's Table 2 and Figs. 4-6, how informative the features are,
    how well proxies rank."""
