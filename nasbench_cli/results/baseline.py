"""Regression baselines for `nasbench check`: write one from results, compare results against one.

A baseline (JSON, `nasbench-baseline/1`) stores per benchmark its data checksum and L*, and per
algorithm its settings, settings hash, budget and the trial numbers, seeds and final regrets of
every trial. `compare` refuses (UserError, exit 2) when the results cannot be compared with the
baseline (another benchmark, data, budget or settings) and otherwise tests, per algorithm, whether
the current final regrets are worse: a one-sided Mann-Whitney U test (current > baseline) with
p < alpha AND a mean that grew by more than `min_effect` (regret units, test log-perplexity).
An algorithm in the baseline without results is a failure (a gate must not pass because an
optimizer stopped producing results); an algorithm with results but no baseline is only reported.
A trial that never had an incumbent counts as the worst value (+inf) in tests and means.
"""
import json
import math
from pathlib import Path

import numpy as np

from benchmarks.core.errors import UserError
from nasbench_cli.results import aggregate

BASELINE_FORMAT = "nasbench-baseline/1"


def make_baseline(results) -> dict:
    """A baseline dict from a `results_io.Results`."""
    benchmarks = {}
    for name in results.benchmarks:
        per_algo = results.runs[name]
        first = next(iter(per_algo.values()))[0]
        benchmarks[name] = {
            "data_checksum": first.get("data_checksum"),
            "l_star": first["l_star"],
            "algorithms": {algo: {
                "settings_hash": records[0]["settings_hash"],
                "settings": records[0]["settings"],
                "budget_s": records[0]["budget_s"],
                "trials": [r["trial"] for r in records],
                "seeds": [r["seed"] for r in records],
                "final_regret": [r["final_regret"] for r in records],
            } for algo, records in per_algo.items()},
        }
    return {"format": BASELINE_FORMAT, "benchmarks": benchmarks}


def write_baseline(path, results) -> dict:
    """Write the baseline of `results` to `path` atomically; returns it."""
    from benchmarks.core.atomic import write_json_atomic

    baseline = make_baseline(results)
    write_json_atomic(path, baseline, indent=1)
    return baseline


def read_baseline(path) -> dict:
    """A baseline file, validated; UserError naming the file and the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"baseline file not found: {path}; write one with "
                        "`nasbench check RESULTS_DIR --write-baseline FILE`") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"baseline file {path} cannot be read: {exc}") from None
    problem = _baseline_problem(data)
    if problem:
        raise UserError(f"baseline file {path} is malformed: {problem}")
    return data


def _baseline_problem(data) -> str | None:
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        return f"format is not {BASELINE_FORMAT!r}"
    if not isinstance(data.get("benchmarks"), dict) or not data["benchmarks"]:
        return "no benchmarks"
    for name, bench in data["benchmarks"].items():
        algos = bench.get("algorithms") if isinstance(bench, dict) else None
        if not isinstance(algos, dict) or not algos:
            return f"benchmark {name} has no algorithms"
        for algo, entry in algos.items():
            if not isinstance(entry, dict):
                return f"{name}/{algo} is not an object"
            missing = [k for k in ("settings_hash", "budget_s", "final_regret") if k not in entry]
            if missing:
                return f"{name}/{algo} lacks {', '.join(missing)}"
            budget = entry["budget_s"]
            if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not (math.isfinite(budget) and budget > 0):
                return f"{name}/{algo} has budget_s {budget!r}, not a finite number of seconds > 0"
            if not isinstance(entry["settings_hash"], str):
                return f"{name}/{algo} has settings_hash {entry['settings_hash']!r}, not a string"
            if not isinstance(entry["final_regret"], list) or not entry["final_regret"]:
                return f"{name}/{algo} has no final regrets"
            bad = [v for v in entry["final_regret"] if v is not None and not (
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0)]
            if bad:
                return (f"{name}/{algo} has a final regret that is not a finite number >= 0 or null "
                        f"({bad[0]!r}); remake the baseline with --write-baseline")
    return None


def _regrets(values) -> np.ndarray:
    return np.array([math.inf if v is None else float(v) for v in values])


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else math.nan


def min_p_value(n_current: int, n_baseline: int) -> float:
    """The smallest one-sided p-value an exact Mann-Whitney test can give for these sample sizes."""
    return 1.0 / math.comb(n_current + n_baseline, n_current)


def _settings_difference(old: dict | None, new: dict) -> str:
    if not isinstance(old, dict):
        return "settings hash differs"
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: baseline {old.get(k, '(unset)')!r}, results {new.get(k, '(unset)')!r}"
             for k in keys if old.get(k, "(unset)") != new.get(k, "(unset)")]
    return "settings differ (" + "; ".join(diffs) + ")" if diffs else "settings hash differs"


def _refusals(results, base: dict, benchmarks: list[str], algos) -> list[str]:
    """Why the results cannot be compared with the baseline's benchmarks `base` (empty if they can)."""
    problems = []
    for name in sorted(set(results.benchmarks) - set(base)):
        problems.append(f"results hold benchmark '{name}', the baseline has only {', '.join(base)}")
    for name in benchmarks:
        if name not in results.runs:
            problems.append(f"the baseline has benchmark '{name}', the results have only "
                            f"{', '.join(results.benchmarks)}")
            continue
        current = results.runs[name]
        first = next(iter(current.values()))[0]
        if base[name].get("data_checksum") and first.get("data_checksum") != base[name]["data_checksum"]:
            problems.append(f"{name}: results were run on other data (checksum {str(first.get('data_checksum'))[:12]}, "
                            f"baseline {base[name]['data_checksum'][:12]})")
        for algo, entry in base[name]["algorithms"].items():
            if algo not in current or (algos and algo not in algos):
                continue
            record = current[algo][0]
            if record["budget_s"] != entry["budget_s"]:
                unit, short = aggregate.clock_unit_s(name), aggregate.clock_short(name)
                problems.append(f"{name}/{algo}: budget {record['budget_s'] / unit:g} {short} in the results, "
                                f"{entry['budget_s'] / unit:g} {short} in the baseline")
            elif record["settings_hash"] != entry["settings_hash"]:
                problems.append(f"{name}/{algo}: {_settings_difference(entry.get('settings'), record['settings'])}")
    return problems


def compare(results, baseline: dict, alpha: float = 0.05, min_effect: float = 0.01, algos=None,
            benchmarks=None, allow_underpowered: bool = False) -> dict:
    """Compare results with a baseline (restricted to `algos` / `benchmarks` if given); UserError if
    they are not comparable.

    Returns {"passed": bool, "alpha", "min_effect", "checks": [per algorithm dict], "missing": [...],
    "unchecked": [...], "warnings": [...]}; each check has benchmark, algo, status ('ok', 'regressed',
    'missing', 'underpowered'), baseline/current mean and trials, p_value, effect (current - baseline
    mean) and `testable`. A check is underpowered when the results have fewer trials than the baseline
    or too few for the test to reach p < alpha: it fails unless `allow_underpowered`, and a mean that
    grew by more than `min_effect` without a test that could show it is a regression either way.
    """
    from nasbench_cli.results.report_table import mann_whitney

    base = baseline["benchmarks"]
    for name in benchmarks or []:
        if name not in base:
            raise UserError(f"--benchmark {name}: not in the baseline (it has {', '.join(base)})")
    base = {b: base[b] for b in (benchmarks or base)}
    benchmarks = list(base)
    problems = _refusals(results, base, benchmarks, algos)
    if problems:
        raise UserError("results do not match the baseline: " + "; ".join(problems)
                        + " (re-run with the baseline's settings, or write a new baseline with --write-baseline)")
    checks, warnings, unchecked = [], [], []
    for name in benchmarks:
        current = results.runs[name]
        for algo, entry in base[name]["algorithms"].items():
            if algos and algo not in algos:
                continue
            old = _regrets(entry["final_regret"])
            check = {"benchmark": name, "algo": algo, "baseline_trials": len(old), "baseline_mean": _mean(old)}
            if algo not in current:
                checks.append({**check, "status": "missing", "current_trials": 0, "current_mean": math.nan,
                               "p_value": math.nan, "effect": math.nan})
                continue
            new = aggregate.final_regrets(current[algo])
            effect = _mean(new) - _mean(old) if not (math.isinf(_mean(new)) and math.isinf(_mean(old))) else 0.0
            p = mann_whitney(new, old, alternative="greater")
            testable = len(new) >= len(old) and min_p_value(len(new), len(old)) < alpha
            if (p < alpha or not testable) and effect > min_effect:
                status = "regressed"          # shown by the test, or a rise no test here could show
            elif not testable and not allow_underpowered:
                status = "underpowered"
            else:
                status = "ok"
            checks.append({**check, "status": status, "current_trials": len(new), "testable": testable,
                           "current_mean": _mean(new), "p_value": p, "effect": effect})
            if not testable and status == "ok":
                warnings.append(f"{name}/{algo}: with {len(new)} and {len(old)} trials the test cannot reach "
                                f"p < {alpha:g}; passed only because of --allow-underpowered")
            seeds = [r["seed"] for r in current[algo]]
            if entry.get("seeds") is not None and seeds != entry["seeds"]:
                warnings.append(f"{name}/{algo}: seeds differ from the baseline's (compared as distributions)")
        for algo in current:
            if algo not in base[name]["algorithms"] and (not algos or algo in algos):
                unchecked.append(f"{name}/{algo}")
    if algos:
        known = {a for name in benchmarks for a in base[name]["algorithms"]}
        for algo in algos:
            if algo not in known:
                raise UserError(f"--algo {algo}: not in the baseline (it has {', '.join(sorted(known))})")
    return {"passed": all(c["status"] == "ok" for c in checks), "alpha": alpha, "min_effect": min_effect,
            "checks": checks, "unchecked": unchecked, "warnings": warnings}


def format_check(check: dict, alpha: float, min_effect: float) -> str:
    """One line per algorithm for the terminal."""
    where = f"{check['benchmark']}/{check['algo']}"
    if check["status"] == "missing":
        return (f"FAIL     {where}: in the baseline ({check['baseline_trials']} trials) but no results; "
                "a missing algorithm fails the check")
    means = (f"baseline mean {check['baseline_mean']:.4f} ({check['baseline_trials']} trials), "
             f"current mean {check['current_mean']:.4f} ({check['current_trials']} trials), "
             f"one-sided Mann-Whitney p = {check['p_value']:.3g}")
    if check["status"] == "underpowered":
        return (f"FAIL     {where}: {check['current_trials']} trials against the baseline's {check['baseline_trials']}: "
                f"the test cannot reach p < {alpha:g}; run at least as many trials as the baseline "
                f"(or pass --allow-underpowered): {means}")
    if check["status"] == "regressed" and not check.get("testable", True):
        return (f"FAIL     {where}: regret worse by {check['effect']:.4f} (> {min_effect:g}) with too few trials "
                f"to test it: {means}")
    if check["status"] == "regressed":
        return f"FAIL     {where}: regret worse by {check['effect']:.4f} (> {min_effect:g}) with p < {alpha:g}: {means}"
    note = ""
    if check["p_value"] < alpha:
        note = f" (significant, but worse by only {check['effect']:.4f} <= min-effect {min_effect:g})"
    return f"ok       {where}: {means}{note}"
