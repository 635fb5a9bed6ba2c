"""`nasbench export`: results as tidy tables (parquet or csv) for pandas, R or a spreadsheet."""
import click

from nasbench_cli.commands.options import echo_json, expand_benchmarks, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet", show_default=True)
@click.option("--at", "at_text", default=None, metavar="HOURS",
              help="One row per trial and time point on this grid (e.g. 10h,100h,1000h) instead of one per job.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default="export",
              show_default=True, help="Folder for regret.<fmt> (the long table) and trials.<fmt> (one row per trial).")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list, or a family: nmt).")
@click.option("--algo", "algo_text", default=None, help="Only these labels (comma list).")
@click.option("--suite", "suite_text", default=None, metavar="NAME|FILE.toml",
              help="RESULTS_DIR is the --out of `run --suite NAME`: every task's rows, with a first column `task`, "
                   "and in trials.<fmt> the `normalised_regret` that `report --suite` aggregates.")
@json_option
def export(results_dirs, fmt, at_text, out_dir, benchmark_text, algo_text, suite_text, as_json):
    """Write the trial files of `nasbench run` as tidy tables (columns: docs/reference/result-format.md).

    \b
    OUT/regret.<fmt>  one row per trial and finished job (time_s, regret, incumbent, arch, epochs,
                      worker, ...), or with --at one row per trial and time point
    OUT/trials.<fmt>  one row per trial (final regret, incumbent, compute seconds, settings)
    OUT/fronts.<fmt>  multi-objective runs: one row per trial, final-front member and objective

    Needs pandas and pyarrow: pip install 'nasbench[export]'. Read back with pandas.read_parquet.
    """
    from pathlib import Path

    from nasbench_cli.results.export import fronts_table, long_table, trials_table, write_table
    from nasbench_cli.results.files import load_many, parse_name_list, verify_against_data
    from nasbench_cli.results.truncate import parse_hours

    hours = parse_hours(at_text) if at_text else None
    if suite_text is not None:
        from nasbench_cli.results.export import suite_tables

        tables = suite_tables(suite_text, results_dirs, hours, expand_benchmarks(benchmark_text),
                              parse_name_list(algo_text))
    else:
        results = load_many(results_dirs, expand_benchmarks(benchmark_text), parse_name_list(algo_text))
        verify_against_data(results)
        tables = [("regret", long_table(results, hours)), ("trials", trials_table(results)),
                  ("fronts", fronts_table(results))]
    out = Path(out_dir)
    written = {}
    for name, frame in tables:
        if frame is None:
            continue
        path = out / f"{name}.{fmt}"
        write_table(frame, path, fmt)
        written[name] = {"path": str(path), "rows": len(frame), "columns": list(frame.columns)}
    if as_json:
        echo_json(written)
    else:
        for info in written.values():
            click.echo(f"{info['path']}: {info['rows']} rows, {len(info['columns'])} columns")
