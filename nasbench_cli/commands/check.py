"""`nasbench check`: a CI gate that fails when an algorithm's final regret got worse."""
import click

from nasbench_cli.commands.options import echo_json, expand_benchmarks, finite, json_option


@click.command()
@click.argument("results_dirs", metavar="RESULTS_DIR...", nargs=-1, required=True,
                type=click.Path(file_okay=False, path_type=str))
@click.option("--baseline", "baseline_path", type=click.Path(path_type=str), default=None,
              help="Baseline JSON to compare the results with (with --suite: a folder of them).")
@click.option("--write-baseline", "write_path", type=click.Path(path_type=str), default=None,
              help="Write a baseline from the results to this file (atomically) instead of checking.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              callback=finite,
              help="Significance level of the one-sided Mann-Whitney U test (current worse than baseline).")
@click.option("--min-effect", type=click.FloatRange(min=0), default=0.01, show_default=True, callback=finite,
              help="Smallest increase of the mean final regret that counts as a regression, in the regret's unit "
                   "(test log-perplexity on ptb/wt2, GLUE points on bert, perplexity on gpt-*, hypervolume with "
                   "--objectives).")
@click.option("--allow-underpowered", is_flag=True,
              help="Pass an algorithm with fewer trials than the baseline, or too few for the test to reach "
                   "p < ALPHA, if its mean did not grow by more than MIN-EFFECT (default: such a check fails).")
@click.option("--require-isolated", is_flag=True,
              help="Refuse (exit 2) results of plugins not run with `nasbench run --isolate` (for untrusted "
                   "optimizers: in-process code can reach the harness's curves).")
@click.option("--benchmark", "benchmark_text", default=None, help="Only these benchmarks (comma list, or a family: nmt).")
@click.option("--algo", "algo_text", default=None, help="Only these algorithms (comma list).")
@click.option("--suite", "suite_text", default=None, metavar="NAME|FILE.toml",
              help="Gate a suite's results (RESULTS_DIR: the --out of `run --suite`) task by task; --baseline and "
                   "--write-baseline then name a folder holding one baseline per task (<task>.json).")
@json_option
def check(results_dirs, baseline_path, write_path, alpha, min_effect, allow_underpowered, require_isolated,
          benchmark_text, algo_text, as_json, suite_text=None):
    """Fail (exit 1) when an algorithm's final regrets are worse than a baseline's.

    An algorithm regresses when a one-sided Mann-Whitney U test finds its current final regrets
    larger than the baseline's (p < ALPHA) AND its mean final regret grew by more than MIN-EFFECT.
    With fewer trials than the baseline, or too few for the test to reach p < ALPHA, the check fails
    (--allow-underpowered passes it if the mean did not grow by more than MIN-EFFECT; a larger growth
    fails either way).
    An algorithm in the baseline with no results also fails; algorithms with results but no
    baseline are listed and not checked. Results made with another benchmark, data, budget or
    settings than the baseline are refused (exit 2), naming the difference.

    \b
    Make a baseline:   nasbench check results/ --write-baseline results/baselines/ptb.json
    Gate a change:     nasbench check results/ --baseline results/baselines/ptb.json
    Exit codes: 0 no regression, 1 regression or missing algorithm, 2 not comparable / bad input.
    """
    from benchmarks.core.errors import UserError
    from nasbench_cli.results.baseline import compare, format_check, read_baseline, write_baseline
    from nasbench_cli.results.report_table import json_ready
    from nasbench_cli.results.files import load_many, parse_name_list, verify_against_data

    if (baseline_path is None) == (write_path is None):
        raise UserError("give exactly one of --baseline FILE (check) and --write-baseline FILE (write one)")
    from pathlib import Path

    if suite_text is None and any(p is not None and Path(p).is_dir() for p in (baseline_path, write_path)):
        raise UserError("--baseline / --write-baseline name a JSON file (a folder of them goes with --suite)")
    if suite_text is not None:
        return _check_suite(results_dirs, suite_text, baseline_path, write_path, alpha, min_effect,
                            allow_underpowered, parse_name_list(algo_text), as_json)
    benchmarks, algos = expand_benchmarks(benchmark_text), parse_name_list(algo_text)
    if write_path:
        results = load_many(results_dirs, benchmarks, algos)
        verify_against_data(results)
        baseline = write_baseline(write_path, results)
        if as_json:
            echo_json({"written": write_path, "baseline": baseline})
            return
        click.echo(f"wrote baseline {write_path}")
        for name, bench in baseline["benchmarks"].items():
            for algo, entry in bench["algorithms"].items():
                click.echo(f"  {name}/{algo}: {len(entry['final_regret'])} trials, budget "
                           f"{budget_text(name, entry['budget_s'])}, settings {entry['settings_hash']}")
        return
    baseline = read_baseline(baseline_path)
    results = load_many(results_dirs, benchmarks)
    verify_against_data(results)
    if require_isolated:
        _refuse_unisolated_plugins(results, algos)
    outcome = compare(results, baseline, alpha, min_effect, algos, benchmarks, allow_underpowered)
    outcome["pareto_found"] = _pareto_found(results)
    if as_json:
        echo_json(json_ready(outcome))
    else:
        for item in outcome["checks"]:
            click.echo(format_check(item, alpha, min_effect))
        for name in outcome["unchecked"]:
            click.echo(f"note     {name}: has results but no baseline; not checked")
        for key, count in outcome["pareto_found"].items():
            click.echo(f"info     {key}: {count['mean']:.1f} of the {count['of']} true Pareto-optimal systems (BLEU vs "
                       f"decode time) found within {count['lookups']} lookups, mean over trials")
        for line in outcome["warnings"]:
            click.echo(f"warning: {line}", err=True)
        failed = [f"{c['benchmark']}/{c['algo']}" for c in outcome["checks"] if c["status"] != "ok"]
        click.echo(f"check failed: {', '.join(failed)}" if failed else
                   f"check passed: {len(outcome['checks'])} algorithm(s), no regression")
    if not outcome["passed"]:
        raise click.exceptions.Exit(1)


def _pareto_found(results) -> dict:
    """{"benchmark/label": count summary} for the multi-objective runs on nmt-* (the AutoML 2022 metric)."""
    from nasbench_cli.results import pareto_found

    out = {}
    for name, per_label in results.runs.items():
        for label, records in per_label.items():
            count = pareto_found.summary(records)
            if count is not None:
                out[f"{name}/{label}"] = count
    return out


def _refuse_unisolated_plugins(results, algos) -> None:
    """UserError naming the first plugin run (among `algos`, if given) whose trials did not all run isolated."""
    from benchmarks.core.errors import UserError

    for bench, runs in results.runs.items():
        for label, records in runs.items():
            if algos and label not in algos:
                continue
            plugin = any(r.get("algorithm_source") for r in records)
            loose = [r["trial"] for r in records if not r.get("isolated")]
            if plugin and loose:
                raise UserError(f"{bench}/{label}: {len(loose)} of its {len(records)} trials did not run isolated "
                                f"(e.g. trial {loose[0]}); rerun them with `nasbench run --isolate`")


def budget_text(benchmark: str, budget_s: float) -> str:
    """'1000 h', or '100 evaluations' on a benchmark whose clock counts evaluations."""
    from nasbench_cli.results.aggregate import clock_short, clock_unit_s

    return f"{budget_s / clock_unit_s(benchmark):g} {clock_short(benchmark)}"


def _check_suite(results_dirs, suite_text, baseline_dir, write_dir, alpha, min_effect, allow_underpowered, algos,
                 as_json):
    """`check --suite`: each task's results against its own baseline (BASELINE_DIR/<task>.json)."""
    from pathlib import Path

    from benchmarks.core.errors import UserError
    from nasbench_cli.results.baseline import compare, format_check, read_baseline, write_baseline
    from nasbench_cli.results.files import load_results, verify_against_data
    from nasbench_cli.results.report_table import json_ready
    from nasbench_cli.suites.definition import load_suite

    if len(results_dirs) != 1:
        raise UserError("--suite reads one results folder (the --out of `run --suite`)")
    suite, root = load_suite(suite_text), Path(results_dirs[0])
    present = [t for t in suite.tasks if (root / t.name / t.benchmark).is_dir()]
    if not present:
        raise UserError(f"no results of suite '{suite.name}' under {root} (expected {root}/<task>/)")
    if write_dir is not None:
        written = []
        for task in present:
            results = load_results(root / task.name, algos=algos)
            verify_against_data(results)
            write_baseline(Path(write_dir) / f"{task.name}.json", results)
            written.append(task.name)
        if as_json:
            echo_json({"written": write_dir, "tasks": written})
        else:
            click.echo(f"wrote {len(written)} task baselines of suite {suite.name} to {write_dir}")
        return
    outcome = {"suite": suite.name, "tasks": {}, "passed": True, "unchecked": []}
    for task in suite.tasks:
        path = Path(baseline_dir) / f"{task.name}.json"
        has_results = task in present
        if not path.is_file():
            if has_results:
                outcome["unchecked"].append(task.name)
            continue
        if not has_results:
            outcome["tasks"][task.name] = {"passed": False, "checks": [], "missing": True}
            outcome["passed"] = False
            continue
        results = load_results(root / task.name)
        verify_against_data(results)
        result = compare(results, read_baseline(str(path)), alpha, min_effect, algos, None, allow_underpowered)
        outcome["tasks"][task.name] = result
        outcome["passed"] &= bool(result["passed"])
    if as_json:
        echo_json(json_ready(outcome))
    else:
        for name, result in outcome["tasks"].items():
            if result.get("missing"):
                click.echo(f"FAIL     {name}: a baseline but no results")
                continue
            for item in result["checks"]:
                click.echo(f"{name}: " + format_check(item, alpha, min_effect))
            for line in result.get("warnings", []):
                click.echo(f"warning: {name}: {line}", err=True)
        for name in outcome["unchecked"]:
            click.echo(f"note     {name}: has results but no baseline; not checked")
        click.echo("check passed" if outcome["passed"] else "check failed", err=not outcome["passed"])
    if not outcome["passed"]:
        raise click.exceptions.Exit(1)
