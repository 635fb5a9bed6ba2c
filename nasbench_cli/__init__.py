"""The `nasbench` command line: runner, plots, reports, checks and the click commands."""

__version__ = "0.1.0"
