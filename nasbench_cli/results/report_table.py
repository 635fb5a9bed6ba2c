"""The comparison table of `nasbench report`: final-regret statistics per benchmark and algorithm.

Per algorithm: trials, mean final regret with a 95% t-interval, median, the share of trials whose
final incumbent is the benchmark's best architecture (the one holding L*), mean simulated hours to
first reach each of the benchmark's two reach thresholds (`aggregate.reach_thresholds`: regret <= 0.1
and <= 0.05 log-perplexity on ptb; over the trials that did, with their share), CPU seconds per
trial, and a two-sided Mann-Whitney U test against the algorithm with the lowest mean final regret,
Holm-corrected over the algorithms compared. A trial that never found an incumbent has no final
regret: it is left out of mean, interval and median (counted in `no_incumbent`) and ranks as the
worst value in the tests. Multi-objective runs on nmt-* also count the true Pareto-optimal systems
found within 200 lookups (`pareto_found`, the AutoML 2022 competition's metric).
"""
import math

import numpy as np

from nasbench_cli.results import aggregate, pareto_found


def holm(p_values) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted.tolist()


def mann_whitney(a, b, alternative: str = "two-sided") -> float:
    """p-value of scipy's Mann-Whitney U test (a vs b); 1.0 when the samples are indistinguishable
    (all values tied), where scipy returns NaN."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return math.nan
    # infinite values (no incumbent) rank as worst; replace them by a finite value above all others
    both = np.concatenate([a, b])
    finite = both[np.isfinite(both)]
    worst = (finite.max() if len(finite) else 0.0) + 1.0
    a, b = np.where(np.isfinite(a), a, worst), np.where(np.isfinite(b), b, worst)
    if np.all(np.concatenate([a, b]) == a[0]):
        return 1.0
    p = float(stats.mannwhitneyu(a, b, alternative=alternative).pvalue)
    return 1.0 if math.isnan(p) else p


def algo_row(records) -> dict:
    """Statistics of one algorithm's trials (see the module docstring); NaN where undefined."""
    finals = aggregate.final_regrets(records)
    finite = finals[np.isfinite(finals)]
    mean, low, high = aggregate.t_interval(finite)
    low = max(0.0, low) if math.isfinite(low) else low      # regret is >= 0: clip the t-interval there
    best_share = float(np.mean([bool(r["trajectory"]["incumbent"]) and
                                r["trajectory"]["incumbent"][-1] == r["benchmark_best_arch"] for r in records]))
    reach = {}
    unit = aggregate.clock_unit_s(records[0]["benchmark"])
    for threshold in aggregate.reach_thresholds(records[0]):
        if records[0].get("indicator"):        # another indicator than the recorded curve's: final values only
            reach[f"{threshold:g}"] = {"mean_hours": math.nan, "share": math.nan}
            continue
        times = [aggregate.time_to_reach_s(r, threshold) for r in records]
        hit = [t / unit for t in times if t is not None]
        reach[f"{threshold:g}"] = {"mean_hours": float(np.mean(hit)) if hit else math.nan,
                                   "share": len(hit) / len(records)}
    return {
        "trials": len(records),
        "no_incumbent": int(np.sum(~np.isfinite(finals))),
        "budget_hours": sorted({r["budget_s"] / unit for r in records}),     # in the clock's units
        "settings_hash": records[0]["settings_hash"],
        "mean_final_regret": mean, "ci95_low": low, "ci95_high": high,
        "median_final_regret": float(np.median(finite)) if len(finite) else math.nan,
        "best_arch_share": best_share,
        "reach": reach,
        "compute_s_per_trial": float(np.mean([r["compute_s"] for r in records])),
        "isolated_trials": sum(1 for r in records if r.get("isolated")),   # run with --isolate
        "table_used_up": _trials_with(records, "table_used_up_s"),
        "stopped_at_best": _trials_with(records, "stopped_at_best_s"),     # run with --stop-at-best
        "pareto_found": pareto_found.summary(records),     # nmt-* multi-objective runs: the AutoML 2022 count
    }


def _trials_with(records, field: str) -> dict | None:
    """{trials, mean_hours}: the trials whose record has the time `field` (seconds), and its mean in the clock's
    units: `table_used_up_s` (they started every architecture of the table) or `stopped_at_best_s`
    (`--stop-at-best` ended them at the table's best)."""
    unit = aggregate.clock_unit_s(records[0]["benchmark"])
    hours = [r[field] / unit for r in records if r.get(field) is not None]
    return {"trials": len(hours), "mean_hours": float(np.mean(hours))} if hours else None


def used_up_notes(report: dict) -> list[str]:
    """One line per run whose trials used the whole table up before their budget ended, and one per run
    whose trials `--stop-at-best` ended at the table's best."""
    lines = pareto_found.notes(report)
    for name, bench in report["benchmarks"].items():
        for algo, row in bench["algorithms"].items():
            used = row.get("table_used_up")
            if used:
                lines.append(f"{name}/{algo}: {used['trials']} of {row['trials']} trials started every architecture of "
                             f"the table, after {used['mean_hours']:.0f} {aggregate.clock_label(name)} on average; later it could only "
                             "continue trained ones (a saturated result, not a win)")
            stopped = row.get("stopped_at_best")
            if stopped:
                lines.append(f"{name}/{algo}: {stopped['trials']} of {row['trials']} trials stopped at the table's "
                             f"best by validation (--stop-at-best), after {stopped['mean_hours']:.0f} "
                             f"{aggregate.clock_label(name)} on average: their regret is final from there; their CPU "
                             "seconds count only that far")
    return lines


def benchmark_report(per_algo: dict) -> dict:
    """{'best': algo, 'l_star', 'benchmark_best_arch', 'algorithms': {algo: row + p-values}} for one benchmark."""
    rows = {algo: algo_row(records) for algo, records in per_algo.items()}
    ranked = [a for a in rows if math.isfinite(rows[a]["mean_final_regret"])]
    best = min(ranked, key=lambda a: rows[a]["mean_final_regret"]) if ranked else None
    others = [a for a in rows if a != best]
    raw = [mann_whitney(aggregate.final_regrets(per_algo[a]), aggregate.final_regrets(per_algo[best]))
           for a in others] if best else []
    adjusted = holm(raw) if raw else []
    for algo in rows:
        rows[algo]["p_vs_best"] = math.nan
        rows[algo]["p_vs_best_holm"] = math.nan
    for algo, p, p_holm in zip(others, raw, adjusted):
        rows[algo]["p_vs_best"] = p
        rows[algo]["p_vs_best_holm"] = p_holm
    first = next(iter(per_algo.values()))[0]
    return {"best": best, "l_star": first["l_star"], "benchmark_best_arch": first["benchmark_best_arch"],
            "objectives": first.get("objectives"), "constraints": first.get("constraints"),
            "hv_space": first.get("hv_space"), "clock": aggregate.clock_label(first["benchmark"]),
            "indicator": first.get("indicator") or ("hv" if first.get("objectives") else None),
            "regret_unit": aggregate.regret_unit(first),
            "reach_thresholds": list(aggregate.reach_thresholds(first)), "algorithms": rows}


def build_report(results) -> dict:
    """JSON-ready report of a `results_io.Results` (NaN written as null)."""
    return json_ready({"results_dir": str(results.root),
                   "benchmarks": {b: benchmark_report(results.runs[b]) for b in results.benchmarks}})


def json_ready(obj):
    if isinstance(obj, dict):
        return {k: json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


COLUMNS = ("algorithm", "trials", "mean", "95% CI", "median", "best arch", "h to ≤A (share)",
           "h to ≤B (share)", "CPU s/trial", "p vs best (Holm)")   # A, B: the benchmark's reach thresholds
NARROW = ("algorithm", "trials", "mean", "95% CI", "best arch", "h to ≤B (share)", "CPU s/trial",
          "p vs best (Holm)")   # the terminal table without --wide: fits 100 columns
NARROW_WIDTH, WIDE_WIDTH = 100, 160


def _num(value, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table_rows(bench: dict) -> list[list[str]]:
    """Formatted cells, one row per algorithm, in COLUMNS order."""
    rows = []
    for algo, row in bench["algorithms"].items():
        trials = str(row["trials"]) + (f" ({row['no_incumbent']} none)" if row["no_incumbent"] else "")
        interval = "–" if row["ci95_low"] is None else f"{row['ci95_low']:.4f}–{row['ci95_high']:.4f}"
        reach = ["–" if r["share"] is None else f"{_num(r['mean_hours'], 1)} ({r['share']:.0%})"
                 for r in row["reach"].values()]
        p = "best" if algo == bench["best"] else \
            (f"{row['p_vs_best_holm']:.2g}" if row["p_vs_best_holm"] is not None else "–")
        isolated = row.get("isolated_trials", 0)
        name = algo if not isolated else f"{algo} (isolated)" if isolated == row["trials"] \
            else f"{algo} ({isolated} isolated)"
        rows.append([name, trials, _num(row["mean_final_regret"]), interval, _num(row["median_final_regret"]),
                     f"{row['best_arch_share']:.0%}", *reach, f"{row['compute_s_per_trial']:.3g}", p])
    return rows


def caption(name: str, bench: dict) -> str:
    budgets = sorted({b for row in bench["algorithms"].values() for b in row["budget_hours"]})
    budget = ", ".join(f"{b:g}" for b in budgets) + " " + bench.get("clock", "simulated hours")
    if bench.get("objectives"):
        hv = bench["hv_space"]
        within = f" within {' and '.join(bench['constraints'])}" if bench.get("constraints") else ""
        if bench.get("indicator") not in (None, "hv"):
            what = {"hv-range": "hypervolume regret over the table's whole range (reference at its worst values)",
                    "igd+": "IGD+ over the table's whole range"}[bench["indicator"]]
            return (f"{name}: final {what} on {','.join(bench['objectives'])}{within} (true front: "
                    f"{hv['true_front_size']} architectures; indicator {bench['indicator']}) after {budget}")
        return (f"{name}: final hypervolume regret on {','.join(bench['objectives'])}{within} (normalised; true "
                f"front: {hv['true_front_size']} architectures, HV {hv['true_hv']:.4f}; indicator hv) after {budget}")
    if bench.get("constraints"):
        unit = {"bert": "GLUE points"}.get(name, "dev BLEU points" if name.startswith("nmt-") else
                                           "dev perplexity" if name.startswith("lora-") else "test log-perplexity")
        return (f"{name}: final regret within {' and '.join(bench['constraints'])} ({unit} against the best feasible "
                f"architecture, {bench['benchmark_best_arch']}: {abs(bench['l_star']):.4f}) after {budget}")
    if name.startswith("gpt-"):
        return (f"{name}: final regret (supernet perplexity − the table's lowest, {bench['l_star']:.4f}, architecture "
                f"{bench['benchmark_best_arch']}) after {budget}")
    if name.startswith("lora-"):
        return (f"{name}: final regret (dev perplexity of the incumbent checkpoint − the table's lowest, "
                f"{bench['l_star']:.4f}, configuration {bench['benchmark_best_arch']}) after {budget}")
    if name.startswith("nmt-"):
        return (f"{name}: final regret (best dev BLEU of the table − dev BLEU, in points; best {-bench['l_star']:.2f}, "
                f"system {bench['benchmark_best_arch']}) after {budget}")
    if name == "bert":
        return (f"{name}: final regret (best GLUE of the 500 − GLUE, in points; best {-bench['l_star']:.4f}, "
                f"architecture {bench['benchmark_best_arch']}) after {budget}")
    return (f"{name}: final regret (test log-perplexity − L*, L* = {bench['l_star']:.4f}, best architecture "
            f"{bench['benchmark_best_arch']}) after {budget}")


def markdown(report: dict) -> str:
    """GitHub-flavoured Markdown: a heading and a table per benchmark, then the notes."""
    lines = []
    for name, bench in report["benchmarks"].items():
        lines += [f"### {caption(name, bench)}", "", "| " + " | ".join(clock_columns(COLUMNS, bench)) + " |",
                  "|" + "|".join(["---"] + ["---:"] * (len(COLUMNS) - 1)) + "|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(bench)]
        lines.append("")
    lines.extend(f"Note: {line}\n" for line in used_up_notes(report))
    lines.append(NOTES)
    return "\n".join(lines) + "\n"


def clock_columns(columns, bench: dict) -> list:
    """The column headers of a benchmark's table: its reach thresholds in place of A and B, and `h to`
    reading `evals to` on an evaluation clock."""
    first, second = (f"{float(t):g}" for t in bench["reach_thresholds"])
    columns = [c.replace("≤A", f"≤{first}").replace("≤B", f"≤{second}") for c in columns]
    short = {"evaluations": "evals", "checkpoints": "ckpts", "training updates": "updates"}.get(bench.get("clock"))
    if short:
        return [c.replace("h to ", f"{short} to ") for c in columns]
    return columns


NOTES = ("mean, 95% CI, median: final regret; 95% CI: Student-t interval of the mean, clipped at 0 (regret is >= 0); none: trials that never had "
         "an incumbent (left out of mean and median, worst in the tests). best arch: share of trials whose final incumbent is the "
         "architecture holding L*. h (evals) to ≤x: mean simulated hours (evaluations, on gpt-*) until regret first was ≤ x, in the regret's unit "
         "(the benchmark's two thresholds), over the trials that got there (share in brackets). p vs best: two-sided Mann-Whitney U test against the algorithm with the "
         "lowest mean final regret, Holm-corrected.")


def print_rich(report: dict, wide: bool = False, console=None) -> None:
    """Aligned tables on the terminal (rich): the NARROW columns in 100 characters, or with `wide`
    every column (about 135 characters)."""
    from rich.console import Console
    from rich.table import Table

    columns = COLUMNS if wide else NARROW
    keep = [COLUMNS.index(c) for c in columns]
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=WIDE_WIDTH if wide else NARROW_WIDTH)
    for name, bench in report["benchmarks"].items():
        table = Table(title=caption(name, bench), title_justify="left")
        for i, column in enumerate(clock_columns(columns, bench)):
            table.add_column(column, justify="left" if i == 0 else "right", no_wrap=i < 4)
        for cells in table_rows(bench):
            table.add_row(*[cells[k] for k in keep], style="bold" if cells[0] == bench["best"] else None)
        console.print(table)
    if not wide:
        console.print("(median and the first reach column: --wide)", style="dim")
    for line in used_up_notes(report):
        console.print(f"note: {line}", style="yellow")
    console.print(NOTES, style="dim")
