"""Result records as tidy pandas tables (`nasbench export`, `nasbench.load_results`).

Columns are listed in docs/reference/result-format.md ("Exported tables"); times are simulated seconds
(`time_s`) and hours (`time_h`), regrets are test log-perplexity - L*. On gpt-* the clock counts
evaluations: `time_s` (and `budget_s`) hold evaluations, `time_h` and `budget_h` are NaN.
"""
import json
import math

from nasbench_cli.results.aggregate import clock_unit_s

ID_COLUMNS = ("benchmark", "label", "algo", "workers", "trial", "seed")
JOB_COLUMNS = (*ID_COLUMNS, "job", "time_s", "time_h", "regret", "incumbent", "incumbent_epoch", "arch", "epochs",
               "start_s", "worker", "from_epoch", "overhead_s")
GRID_COLUMNS = (*ID_COLUMNS, "time_h", "time_s", "regret", "incumbent", "incumbent_epoch", "jobs_done")
TRIAL_COLUMNS = (*ID_COLUMNS, "budget_h", "final_regret", "final_incumbent", "final_incumbent_epoch",
                 "ended_on_benchmark_best", "n_evaluations", "simulated_time_s", "stopped_at_best_s", "compute_s",
                 "settings_hash", "settings", "algorithm_class", "objectives", "constraints", "pareto_found")
FRONT_COLUMNS = (*ID_COLUMNS, "member", "arch", "epoch", "objective", "unit", "value")


def _pandas():
    try:
        import pandas
    except ImportError:
        from benchmarks.core.errors import UserError

        raise UserError("exporting tables needs pandas: pip install 'nasbench[export]' "
                        "(or pip install -e '.[export]' in a clone)") from None
    return pandas


def _records(results):
    for runs in results.runs.values():
        for label, records in runs.items():
            for record in records:
                yield label, record


def _ids(label: str, record: dict) -> dict:
    return {"benchmark": record["benchmark"], "label": label, "algo": record["algo"],
            "workers": int(record.get("workers") or 1), "trial": record["trial"], "seed": record["seed"]}


def long_table(results, at_hours=None):
    """One row per trial and finished job (`at_hours` None), else one row per trial and time in
    `at_hours` (hours): the trial's state at that simulated time."""
    pandas = _pandas()
    rows = []
    for label, record in _records(results):
        ids, traj = _ids(label, record), record["trajectory"]
        hour = 3600.0 if clock_unit_s(record["benchmark"]) == 3600.0 else math.nan   # evaluation clocks: no hours
        jobs = record.get("jobs") or {}
        n = len(traj["time_s"])
        if at_hours is None:
            for k in range(n):
                rows.append({**ids, "job": k, "time_s": traj["time_s"][k], "time_h": traj["time_s"][k] / hour,
                             "regret": traj["regret"][k], "incumbent": traj["incumbent"][k],
                             "incumbent_epoch": traj["incumbent_epoch"][k], "arch": traj["arch"][k],
                             "epochs": traj["epochs"][k],
                             **{key: (jobs[key][k] if key in jobs else None)
                                for key in ("start_s", "worker", "from_epoch", "overhead_s")}})
            continue
        for hours in at_hours:
            t = hours * clock_unit_s(record["benchmark"])
            done = sum(1 for x in traj["time_s"] if x <= t)
            last = done - 1
            beyond = t > record["budget_s"]
            rows.append({**ids, "time_h": t / hour, "time_s": t,
                         "regret": math.nan if beyond or last < 0 or traj["regret"][last] is None
                         else traj["regret"][last],
                         "incumbent": None if beyond or last < 0 else traj["incumbent"][last],
                         "incumbent_epoch": None if beyond or last < 0 else traj["incumbent_epoch"][last],
                         "jobs_done": done})
    columns = JOB_COLUMNS if at_hours is None else GRID_COLUMNS
    frame = pandas.DataFrame(rows, columns=list(columns))
    ints = ["incumbent", "incumbent_epoch"] + (["arch", "epochs", "worker", "from_epoch"] if at_hours is None else [])
    return frame.astype({"regret": "float64", "time_s": "float64", "time_h": "float64", **{c: "Int64" for c in ints}})


def trials_table(results):
    """One row per trial."""
    pandas = _pandas()
    from nasbench_cli.results import pareto_found

    rows, fronts = [], {}
    for label, record in _records(results):
        traj = record["trajectory"]
        final = traj["incumbent"][-1] if traj["incumbent"] else None
        if record["benchmark"] not in fronts:
            fronts[record["benchmark"]] = pareto_found.published_front(record["benchmark"])
        front = fronts[record["benchmark"]] if record.get("objectives") else None
        source = record.get("algorithm_source") or {}
        hour = 3600.0 if clock_unit_s(record["benchmark"]) == 3600.0 else math.nan
        rows.append({**_ids(label, record), "budget_h": record["budget_s"] / hour,
                     "final_regret": math.nan if record["final_regret"] is None else record["final_regret"],
                     "final_incumbent": final,
                     "final_incumbent_epoch": traj["incumbent_epoch"][-1] if traj["incumbent_epoch"] else None,
                     "ended_on_benchmark_best": final is not None and final == record["benchmark_best_arch"],
                     "n_evaluations": len(traj["time_s"]), "simulated_time_s": record.get("simulated_time_s"),
                     "stopped_at_best_s": record.get("stopped_at_best_s", math.nan),
                     "compute_s": record["compute_s"], "settings_hash": record["settings_hash"],
                     "settings": json.dumps(record["settings"], sort_keys=True),
                     "algorithm_class": source.get("class"),
                     "objectives": ",".join(record.get("objectives") or []),
                     "constraints": " ".join(record.get("constraints") or []),
                     # nmt-* multi-objective: true Pareto-optimal systems found within 200 lookups (AutoML 2022)
                     "pareto_found": None if front is None else pareto_found.found(record, front)})
    frame = pandas.DataFrame(rows, columns=list(TRIAL_COLUMNS))
    return frame.astype({"final_regret": "float64", "final_incumbent": "Int64", "final_incumbent_epoch": "Int64",
                         "pareto_found": "Int64"})


def fronts_table(results):
    """Multi-objective runs: one row per trial, final-front member and objective (tidy): the member's
    architecture and epoch and its test value of that objective in natural units (GLUE points on
    bert); None when no trial has objectives."""
    from benchmarks.core.objectives import natural, objective_for
    from benchmarks.core.pareto import objective_space
    from benchmarks.core.registry import load_benchmark
    from benchmarks.core.problem import scoring_problem

    pandas = _pandas()
    rows, spaces = [], {}
    for label, record in _records(results):
        if not record.get("objectives"):
            continue
        key = (record["benchmark"], tuple(record["objectives"]), tuple(record.get("constraints") or ()))
        if key not in spaces:
            benchmark = load_benchmark(record["benchmark"])
            spaces[key] = benchmark, objective_space(benchmark, *scoring_problem(*key))
        benchmark, space = spaces[key]
        for member, (arch, epoch) in enumerate(record["front"]):
            row = benchmark.search.index_of(arch)
            for col, name in enumerate(record["objectives"]):
                value = benchmark.test_loss[row, epoch - 1] if col == space.loss_column else space.static[row, col]
                rows.append({**_ids(label, record), "member": member, "arch": arch, "epoch": epoch, "objective": name,
                             "unit": objective_for(name, record["benchmark"]).unit, "value": float(natural(name, value))})
    if not spaces:
        return None
    return pandas.DataFrame(rows, columns=list(FRONT_COLUMNS))


def suite_tables(suite_text: str, results_dirs, at_hours=None, benchmarks=None, algos=None) -> list:
    """[(name, frame)] of `export --suite`: each table over the suite's task folders under the one
    results folder, a first column `task`; trials also get `normalised_regret` (`report --suite`'s per-trial
    value). UserError (one line) for a second folder, no task results, or an --algo found in no task."""
    from pathlib import Path

    from benchmarks.core.errors import UserError
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.results.files import load_results, verify_against_data
    from nasbench_cli.results.suite_report import check_task_settings, no_suite_results, normalised
    from nasbench_cli.suites.definition import load_suite

    if len(results_dirs) != 1:
        raise UserError("--suite reads one results folder (the --out of `run --suite`)")
    pandas = _pandas()
    suite, root = load_suite(suite_text), Path(results_dirs[0])
    parts: dict = {"regret": [], "trials": [], "fronts": []}
    seen = set()
    for task in suite.tasks:
        if benchmarks and task.benchmark not in benchmarks or not (root / task.name / task.benchmark).is_dir():
            continue
        results = load_results(root / task.name, [task.benchmark])
        runs = results.runs[task.benchmark]
        runs = {label: records for label, records in runs.items() if not algos or label in algos}
        if not runs:
            continue
        check_task_settings(task, runs, root / task.name / task.benchmark)
        results.runs = {task.benchmark: runs}
        verify_against_data(results)
        seen |= set(runs)
        benchmark = load_benchmark(task.benchmark)
        trials = trials_table(results)
        values = {(label, r["trial"]): v for label, records in runs.items()
                  for r, v in zip(records, normalised(records, benchmark))}
        trials["normalised_regret"] = [float(values[key]) for key in zip(trials["label"], trials["trial"])]
        for name, frame in (("regret", long_table(results, at_hours)), ("trials", trials), ("fronts", fronts_table(results))):
            if frame is not None:
                frame.insert(0, "task", task.name)
                parts[name].append(frame)
    if not parts["trials"]:
        raise no_suite_results(suite, root)
    absent = [label for label in algos or () if label not in seen]
    if absent:
        raise UserError(f"--algo: no results of {', '.join(absent)} under {root}")
    return [(name, pandas.concat(frames, ignore_index=True)) for name, frames in parts.items() if frames]


def write_table(frame, path, fmt: str) -> None:
    """Write `frame` to `path` as parquet or csv, atomically (temp file + rename)."""
    import io

    from benchmarks.core.atomic import write_bytes_atomic

    if fmt == "csv":
        data = frame.to_csv(index=False).encode()
    else:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            from benchmarks.core.errors import UserError

            raise UserError("parquet needs pyarrow: pip install 'nasbench[export]' (or use --format csv)") from None
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        data = buffer.getvalue()
    write_bytes_atomic(path, data)
