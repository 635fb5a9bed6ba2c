"""Click options shared by several commands."""
import click

from benchmarks.core.catalog import BENCHMARKS, FAMILIES


class NameChoice(click.Choice):
    """A choice of names that ignores case (returns the listed spelling) and suggests the closest
    names for a misspelt one."""

    def __init__(self, choices):
        super().__init__(choices, case_sensitive=False)

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            from benchmarks.core.names import did_you_mean

            self.fail(f"'{value}' is not one of {', '.join(self.choices)}{did_you_mean(str(value), self.choices)}",
                      param, ctx)


class BenchmarkList(click.ParamType):
    """One benchmark, a comma list, or a family name (`nmt`: all six translation pairs) -> a tuple of
    catalog names, each checked as NameChoice does."""
    name = "NAME[,NAME...]|FAMILY"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        names = []
        for part in (p.strip() for p in str(value).split(",")):
            if not part:
                continue
            if part.lower() in FAMILIES:
                names += FAMILIES[part.lower()]
            else:
                names.append(NameChoice(sorted(BENCHMARKS) + sorted(FAMILIES)).convert(part, param, ctx))
        if not names:
            self.fail(f"{value!r} names no benchmark", param, ctx)
        return tuple(dict.fromkeys(names))


def expand_benchmarks(text: str | None) -> list[str] | None:
    """`--benchmark` filter text of report/plot/check/export -> catalog names with family names expanded
    ('nmt' -> its six pairs); None or '' -> None (no filter). Unknown names are kept (a filter)."""
    if not text:
        return None
    names = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        names += FAMILIES.get(part.lower(), (part,))
    return list(dict.fromkeys(names)) or None


data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=str), default=None,
    help="Folder with the NAS-Bench-NLP release layout (default: $NASBENCH_DATA or ../shared/nas-bench-nlp).")
benchmark_option = click.option(
    "--benchmark", "benchmark_name", type=NameChoice(sorted(BENCHMARKS)), default="ptb", show_default=True,
    help="Which benchmark.")
benchmarks_option = click.option(
    "--benchmark", "benchmark_names", type=BenchmarkList(), default="ptb", show_default=True,
    help="Which benchmark; a comma list or a family (" + ", ".join(f"{f}: {', '.join(n)}" for f, n in FAMILIES.items())
         + ") runs each in turn.")
cell_benchmark_option = click.option(
    "--benchmark", "benchmark_name", type=NameChoice(sorted(n for n, spec in BENCHMARKS.items()
                                                           if not spec.single_fidelity)),
    default="ptb", show_default=True, help="Which recurrent-cell benchmark (NAS-Bench-NLP).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def finite(ctx, param, value):
    """Click callback: refuse NaN and infinity (click's FloatRange lets NaN through every bound)."""
    import math

    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


def echo_json(obj) -> None:
    import json

    click.echo(json.dumps(obj, indent=2, allow_nan=False))
