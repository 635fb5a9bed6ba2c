"""Aggregating a suite's results across its tasks.

**Normalised regret, per trial** (dimensionless, the same definition for every objective kind):
- single-objective (and constrained): final regret / (the median architecture's score − the best), over
  the architectures the task admits (its constraints), each at its best epoch. 0 = the best architecture,
  1 = a typical (median) one; a trial without an incumbent counts as the worst admitted architecture.
  Dividing by the median's distance (not the worst's) keeps one diverged cell from squashing a task.
- multi-objective: final HV regret / the true front's HV. 0 = the true front, 1 = nothing found (also
  what a trial without a front scores). With another indicator (`report --suite --indicator`, see
  `nasbench_cli.results.indicators`): its final value / its value with no front (`NORMALISATIONS`), so
  again 0 = the true front and 1 = nothing found.
Both are unit-free, so log-perplexity, BLEU, GLUE and perplexity tasks can be averaged.

**Across tasks, per algorithm** (over the tasks it ran): the mean and the interquartile mean (IQM: the
mean of the middle 50% of all its (task, trial) values), each with a 95% stratified-bootstrap interval:
2,000 resamples drawing trials with replacement within each task (rliable's `StratifiedBootstrap`
definition, Agarwal et al. 2021), percentile interval, seed 0. The mean rank over tasks (ranked by mean
normalised regret within a task, among the algorithms that ran it), the probability of improvement over
`rs`, or over any other algorithm (`report --suite --versus`) (Mann-Whitney's P(X < Y) + P(X = Y)/2 per task,
averaged over the tasks both ran), and two critical-difference
diagrams (`nasbench_cli.results.critical_difference`): every algorithm over the tasks all of them ran, and
the algorithms that ran every task over all the suite's tasks.

**Anytime**: the same IQM (and mean rank) with every trial cut at 1%, 3%, 10%, 30% and 100% of its
budget (in the task's own clock), so the algorithms compare early as well as at the end
(`ANYTIME_FRACTIONS`); a trial with no incumbent yet counts as the worst, as defined above.

**Overtuning** (tasks with separate validation and test, ptb and wt2): per algorithm, the mean validation
regret of the final incumbent beside its test regret, and the share of trials whose best-by-validation
(cell, epoch) was not the best by test among the (cell, epoch) pairs it trained.
"""
import math

import numpy as np

REFERENCES = ("rs", "top1e")
BOOTSTRAP_RESAMPLES = 2000
ANYTIME_FRACTIONS = (0.01, 0.03, 0.1, 0.3, 1.0)   # of each trial's budget


def _admitted(benchmark, constraints) -> np.ndarray:
    from benchmarks.core.objectives import architecture_values, loss_objective

    feasible = np.ones(benchmark.search.n, dtype=bool)
    for constraint in constraints:
        if constraint.objective != loss_objective(benchmark.name):
            feasible &= constraint.holds(architecture_values(benchmark.search, constraint.objective))
    return feasible


def task_scale(benchmark, constraints=()) -> tuple[float, float]:
    """(median − best, worst − best) of the admitted architectures' best test scores (the loss objective)."""
    test = np.where(np.isfinite(benchmark.test_loss), benchmark.test_loss, np.inf).min(axis=1)
    values = test[_admitted(benchmark, constraints) & np.isfinite(test)]
    best = values.min()
    return float(np.median(values) - best), float(values.max() - best)


NORMALISATIONS = {  # multi-objective tasks, by indicator (`report --suite --indicator`); 0 = the true front
    "hv": "HV regret / true HV",
    "hv-range": "HV regret over the table's range / the true front's HV there",
    "igd+": "IGD+ / sqrt(objectives), its value with no front",
}
_NOTHING_FOUND: dict = {}


def nothing_found(record: dict, benchmark) -> float:
    """The value of a multi-objective record's indicator (`record['indicator']`, else the recorded HV
    regret) for a trial that found no front: what its normalised regret divides by (1 = nothing found)."""
    name = record.get("indicator") or "hv"
    if name == "hv":
        return float(record["hv_space"]["true_hv"])
    key = (benchmark.name, getattr(benchmark, "checksum", None), tuple(record["objectives"]),
           tuple(record.get("constraints") or ()), name)
    if key not in _NOTHING_FOUND:
        from nasbench_cli.results.indicators import _space, indicator_measure

        space = _space(record, benchmark)
        _NOTHING_FOUND[key] = float(indicator_measure(benchmark, space, name)(np.empty((0, len(space.objectives)))))
    return _NOTHING_FOUND[key]


def normalised(records, benchmark=None) -> np.ndarray:
    """Normalised final regret of each trial of one run (module docstring); multi-objective records carry
    the indicator `with_indicator` put in them (else the recorded HV regret)."""
    first = records[0]
    finals = np.array([math.nan if r["final_regret"] is None else float(r["final_regret"]) for r in records])
    if first.get("objectives"):
        worst = nothing_found(first, benchmark)
        return np.where(np.isfinite(finals), finals, worst) / worst
    from benchmarks.core.problem import scoring_problem

    _, constraints = scoring_problem(first["benchmark"], (), first.get("constraints") or ())
    median, worst = task_scale(benchmark, constraints)
    return np.where(np.isfinite(finals), finals, worst) / median


def iqm(values: np.ndarray, axis: int | None = None):
    """Interquartile mean: the mean of the middle half (25% cut from each end, scipy's trim_mean); a float,
    or one per row or column along `axis`."""
    from scipy.stats import trim_mean

    if axis is None:
        return float(trim_mean(np.ravel(values), 0.25))
    return trim_mean(values, 0.25, axis=axis)


def stratified_interval(groups: list, statistic, seed: int = 0, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of `statistic` over stratified resamples: each group (a task's trials) resampled
    with replacement, the groups concatenated. `statistic(samples, axis=1)` gives one value per row of the
    resamples stacked as rows (np.mean, iqm)."""
    rng = np.random.default_rng(seed)
    samples = np.stack([np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
                        for _ in range(BOOTSTRAP_RESAMPLES)])
    values = statistic(samples, axis=1)
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def probability_of_improvement(x: np.ndarray, y: np.ndarray) -> float:
    """P(X < Y) + P(X = Y) / 2 (lower regret is better)."""
    less = (x[:, None] < y[None, :]).mean()
    equal = (x[:, None] == y[None, :]).mean()
    return float(less + equal / 2)


def overtuning(records, benchmark) -> dict | None:
    """{"val_regret", "test_regret", "not_best_by_test"} of one single-objective run on a table with
    separate validation and test losses (ptb, wt2), else None."""
    if records[0].get("objectives") or benchmark.name not in ("ptb", "wt2"):
        return None
    search, test = benchmark.search, benchmark.test_loss
    val_star = float(np.nanmin(search.val_loss))
    val_regrets, test_regrets, missed = [], [], 0
    for record in records:
        traj = record["trajectory"]
        if not traj["incumbent"]:
            continue
        row = int(search.index_of(traj["incumbent"][-1]))
        epoch = int(traj["incumbent_epoch"][-1])
        val_regrets.append(float(search.val_loss[row, epoch - 1]) - val_star)
        test_regrets.append(float(test[row, epoch - 1]) - benchmark.l_star)
        reached: dict = {}
        for arch, epochs in zip(traj["arch"], traj["epochs"]):
            r = int(search.index_of(arch))
            reached[r] = max(reached.get(r, 0), int(epochs))
        best_test = min((float(test[r, e]), r, e + 1) for r, top in reached.items() for e in range(top)
                        if math.isfinite(test[r, e]))
        missed += (best_test[1], best_test[2]) != (row, epoch)
    if not val_regrets:
        return None
    return {"val_regret": float(np.mean(val_regrets)), "test_regret": float(np.mean(test_regrets)),
            "not_best_by_test": missed / len(val_regrets), "trials": len(val_regrets)}


def _mean_ranks(per_task_means: list[dict], labels) -> dict:
    """Each label's mean over tasks of its rank (1 = lowest) among the labels that ran the task."""
    from scipy.stats import rankdata

    ranks = {label: [] for label in labels}
    for means in per_task_means:
        present = [label for label in labels if label in means]
        for label, rank in zip(present, rankdata([means[label] for label in present])):
            ranks[label].append(float(rank))
    return {label: float(np.mean(values)) for label, values in ranks.items() if values}


def anytime_table(per_task: dict, labels) -> dict:
    """IQM of normalised regret and mean rank per algorithm with every trial cut at each of
    `ANYTIME_FRACTIONS` of its budget (the module docstring): {"fractions", "iqm": {label: [...]},
    "mean_rank": {label: [...]}}."""
    from nasbench_cli.results.truncate import record_at

    table = {"fractions": list(ANYTIME_FRACTIONS), "iqm": {label: [] for label in labels},
             "mean_rank": {label: [] for label in labels}}
    for fraction in ANYTIME_FRACTIONS:
        values, means = {label: [] for label in labels}, []
        for runs in per_task.values():
            benchmark = runs["__benchmark__"]
            cut = {label: normalised([record_at(r, fraction * r["budget_s"]) for r in records], benchmark)
                   for label, records in runs["__records__"].items()}
            for label, v in cut.items():
                values[label].append(v)
            means.append({label: float(v.mean()) for label, v in cut.items()})
        ranks = _mean_ranks(means, labels)
        for label in labels:
            table["iqm"][label].append(iqm(np.concatenate(values[label])) if values[label] else None)
            table["mean_rank"][label].append(ranks.get(label))
    return table


def no_suite_results(suite, root):
    """The UserError of a folder that holds none of `suite`'s task results."""
    from benchmarks.core.errors import UserError

    return UserError(f"no results of suite '{suite.name}' under {root} (expected {root}/<task>/, e.g. "
                     f"{root / suite.tasks[0].name}); run `nasbench run --suite {suite.name} --out {root}` first")


def check_task_settings(task, runs: dict, folder) -> None:
    """UserError (one line) when the trials of a run in a task's folder (`runs`: {label: records}, under
    `folder`, the task's benchmark folder) were not run as the task says (budget, workers, objectives,
    constraints): results copied in from another run would be aggregated as the suite's. `run --suite`
    writes them as the task says."""
    from benchmarks.core.constraints import parse_constraints
    from benchmarks.core.errors import UserError
    from benchmarks.core.problem import parse_problem
    from benchmarks.core.registry import get_spec

    spec = get_spec(task.benchmark)
    budget = task.budget if task.budget is not None else spec.default_budget
    objectives, constraints = parse_problem(task.benchmark, task.objectives, task.constraints)
    wanted = {"budget": float(budget), "workers": task.workers, "objectives": tuple(objectives),
              "constraints": set(constraints)}
    shown = {"budget": lambda v: f"a budget of {v:g} {spec.clock}", "workers": lambda v: f"{v} workers",
             "objectives": lambda v: f"objectives {','.join(v) or '(one)'}",
             "constraints": lambda v: "constraints " + (",".join(sorted(map(str, v))) or "(none)")}
    for label, records in runs.items():
        first = records[0]
        found = {"budget": first["budget_s"] / spec.clock_unit_s, "workers": int(first.get("workers") or 1),
                 "objectives": tuple(first.get("objectives") or ()),
                 "constraints": set(parse_constraints(first.get("constraints") or (), task.benchmark))}
        for key in found:
            if key == "budget" and math.isclose(found[key], wanted[key], rel_tol=1e-9) or found[key] == wanted[key]:
                continue
            raise UserError(f"{folder / label}: its trials ran with {shown[key](found[key])}, but the suite's task "
                            f"{task.name} has {shown[key](wanted[key])}; they are not this task's results (run the "
                            "task with `run --suite`, or describe the run in a suite file of your own)")


def uneven_trials(per_task: dict, labels) -> list[str]:
    """Notes for each algorithm with fewer trials on some tasks than on its others (a run stopped or still
    going there): its pooled IQM and mean weigh those tasks less, and its ranks compare fewer trials."""
    notes = []
    for label in labels:
        counts = {name: len(runs[label]) for name, runs in per_task.items() if label in runs}
        most = max(counts.values())
        short = {name: n for name, n in counts.items() if n < most}
        if short:
            listed = ", ".join(f"{n} on {name}" for name, n in list(short.items())[:4]) + (", ..." if len(short) > 4 else "")
            notes.append(f"'{label}' has fewer trials on {len(short)} task(s) than the {most} of its others ({listed}): "
                         f"its figures weigh those tasks less; complete them by running the suite again with "
                         f"--trials {most} (finished trials are kept)")
    return notes


def absent_where_it_runs(suite, root, per_task: dict, labels) -> list[str]:
    """Notes for each algorithm missing from tasks of `per_task` (tasks with results here) that it can run
    (`check_algorithm_fits` with its default settings; a plugin by the file or module its results name): its
    IQM, mean and mean rank are then over fewer tasks than the others' and not comparable with them. Tasks it
    cannot serve (top1e without epochs, a multi-objective algorithm on one objective) are not its to run and
    go unmentioned; an algorithm that cannot be made here (a plugin's file gone) is named for every task
    it lacks."""
    from benchmarks.core.errors import UserError
    from benchmarks.core.problem import parse_problem
    from nasbench_cli.harness.preflight import check_algorithm_fits
    from optimizers.registry import make_algorithm

    tasks = {task.name: task for task in suite.tasks}
    notes = []
    for label in labels:
        ran = [name for name, runs in per_task.items() if label in runs]
        lacking = [name for name in per_task if name not in ran]
        if not lacking:
            continue
        first = per_task[ran[0]]["__records__"][label][0]
        algo = (first.get("algorithm_source") or {}).get("spec") or first["algo"]
        try:
            make_algorithm(algo)
            known = True
        except UserError:
            known = False
        could = []
        for name in lacking:
            task = tasks[name]
            objectives, _ = parse_problem(task.benchmark, task.objectives, task.constraints)
            try:
                if known:
                    check_algorithm_fits(algo, per_task[name]["__benchmark__"], tuple(objectives))
            except UserError:
                continue
            could.append(name)
        if could:
            most = max(len(per_task[name]["__records__"][label]) for name in ran)
            listed = ", ".join(could[:4]) + (", ..." if len(could) > 4 else "")
            where = (f"it can run ({listed})" if known else
                     f"others ran ({listed}; whether it can run them is unknown: {algo} cannot be loaded here)")
            notes.append(f"'{label}' has no results on {len(could)} task(s) {where}: its IQM, mean and mean rank are over the "
                         f"{len(ran)} it ran, not comparable with those of algorithms that ran more; run `nasbench "
                         f"run --suite {suite.name} --algo {algo} --trials {most} --out {root}` (finished "
                         "trials are kept)")
    return notes


def suite_report(suite, root, only: list | None = None, indicator: str = "hv", versus: str = "rs") -> dict:
    """The aggregate report of `suite`'s results under `root` (root/<task>/...): JSON-ready. `only`: these
    run labels alone (ranks, intervals and critical differences among them), UserError naming any without
    results there. `indicator`: what multi-objective tasks are scored by (`NORMALISATIONS`). `versus`: the
    label each algorithm's probability of improvement is against (`p_improvement`, over the tasks both
    ran; `p_improvement_over_rs` is always against rs)."""
    from pathlib import Path

    from benchmarks.core.errors import UserError
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.results.files import load_results

    root = Path(root)
    per_task, missing_tasks, overtuned = {}, [], {}
    for task in suite.tasks:
        folder = root / task.name
        if not (folder / task.benchmark).is_dir():
            missing_tasks.append(task.name)
            continue
        runs = load_results(folder).runs.get(task.benchmark, {})
        if only is not None:
            runs = {label: runs[label] for label in only if label in runs}
        if not runs:
            missing_tasks.append(task.name)
            continue
        check_task_settings(task, runs, folder / task.benchmark)
        benchmark = load_benchmark(task.benchmark)
        if indicator != "hv" and task.objectives:
            from nasbench_cli.results.files import Results
            from nasbench_cli.results.indicators import with_indicator

            runs = with_indicator(Results(root=folder, runs={task.benchmark: runs}), indicator).runs[task.benchmark]
        per_task[task.name] = {label: normalised(records, benchmark) for label, records in runs.items()}
        for label, records in runs.items():
            found = overtuning(records, benchmark)
            if found:
                overtuned.setdefault(task.name, {})[label] = found
        per_task[task.name]["__records__"] = runs
        per_task[task.name]["__benchmark__"] = benchmark
    if not per_task:
        raise no_suite_results(suite, root)
    labels = list(dict.fromkeys(label for runs in per_task.values() for label in runs if not label.startswith("__")))
    absent = [label for label in only or () if label not in labels]
    if absent:
        raise UserError(f"--algo: no results of {', '.join(absent)} under {root}")
    if versus != "rs" and versus not in labels:
        if only is not None:
            raise UserError(f"--versus {versus}: not among the algorithms compared ({', '.join(labels)}); add it to --algo")
        raise UserError(f"--versus {versus}: no results of it under {root} (there: {', '.join(labels)})")
    algorithms = {}
    for label in labels:
        groups = [runs[label] for runs in per_task.values() if label in runs]
        values = np.concatenate(groups)
        algorithms[label] = {"tasks": len(groups), "trials": int(len(values)),
                             "mean": float(values.mean()), "mean_ci95": stratified_interval(groups, np.mean),
                             "iqm": iqm(values), "iqm_ci95": stratified_interval(groups, iqm)}
    ranks = _mean_ranks([{label: runs[label].mean() for label in labels if label in runs}
                         for runs in per_task.values()], labels)
    for label in labels:
        algorithms[label]["mean_rank"] = ranks[label]
        for against, key in ((versus, "p_improvement"), ("rs", "p_improvement_over_rs")):
            if against in labels and label != against:
                shared = [runs for runs in per_task.values() if label in runs and against in runs]
                algorithms[label][key] = float(np.mean(
                    [probability_of_improvement(runs[label], runs[against]) for runs in shared])) if shared else None
    from nasbench_cli.results.critical_difference import critical_difference

    anytime = anytime_table(per_task, labels)
    every = [name for name, runs in per_task.items() if all(label in runs for label in labels)]
    cd = None            # every algorithm, over the tasks all of them ran
    if len(every) >= 2 and len(labels) >= 3:
        cd = critical_difference({name: {label: per_task[name]["__records__"][label] for label in labels}
                                  for name in every})
    common = [label for label in labels if all(label in runs for runs in per_task.values())]
    cd_all = None        # the algorithms that ran every task, over all the suite's tasks
    if len(per_task) >= 2 and len(common) >= 3 and len(common) < len(labels):
        cd_all = critical_difference({name: {label: runs["__records__"][label] for label in common}
                                      for name, runs in per_task.items()})
    notes = []
    for reference in REFERENCES:
        if reference not in labels:
            notes.append(f"the reference '{reference}' is missing: run `nasbench run --suite {suite.name} --algo "
                         f"{reference}` (every suite report compares against rs and top1e)")
        else:
            lacking = [n for n in per_task if reference not in per_task[n]]
            if lacking:
                notes.append(f"'{reference}' did not run on {len(lacking)} task(s) (" + ", ".join(lacking[:4]) +
                             ("..." if len(lacking) > 4 else "") + ")" +
                             (": top1e needs epochs, those tasks have none" if reference == "top1e" else ""))
    notes += uneven_trials(per_task, labels)
    notes += absent_where_it_runs(suite, root, per_task, labels)
    if missing_tasks:
        notes.append(f"{len(missing_tasks)} of the suite's {len(suite.tasks)} tasks have no results here: "
                     + ", ".join(missing_tasks[:6]) + ("..." if len(missing_tasks) > 6 else ""))
    return {"suite": suite.name, "version": suite.version, "tasks": list(per_task), "versus": versus,
            "indicator": indicator, "normalisation": "single-objective: regret / (median architecture - best); "
                                                      f"multi-objective: {NORMALISATIONS[indicator]}",
            "algorithms": algorithms, "critical_difference": cd,
            "cd_tasks": every, "critical_difference_all_tasks": cd_all, "anytime": anytime, "overtuning": overtuned,
            "per_task": per_task_table(per_task, labels), "notes": notes}


def per_task_table(per_task: dict, labels) -> dict:
    """{task: {label: {"trials", "mean" (normalised regret), "final_regret" (mean in the task's own unit: its
    regret, or its multi-objective indicator, over the trials with one), "none" (trials without)}}}."""
    table = {}
    for name, runs in per_task.items():
        table[name] = {}
        for label in labels:
            if label not in runs:
                continue
            finals = [r["final_regret"] for r in runs["__records__"][label]]
            kept = [float(v) for v in finals if v is not None and math.isfinite(v)]
            table[name][label] = {"trials": len(finals), "mean": float(runs[label].mean()),
                                  "final_regret": float(np.mean(kept)) if kept else None, "none": len(finals) - len(kept)}
    return table
