"""Measure the CPU cost of one trial of every algorithm on every benchmark, at the benchmark's default
budget and one simulated worker, and write the table `nasbench run` estimates from
(nasbench_cli/harness/trial_cost.json; the docs' cost table is made from it).

Each (benchmark, algorithm) is one `nasbench run --trials 1 --jobs 1 --json` in a fresh results folder;
the figure is the trial's `compute_s` (CPU seconds of its process: algorithm and simulator). Algorithms a
benchmark cannot serve are skipped (the run refuses them in one line); the multi-objective ones run with
the benchmark's first two objectives. Measured into an existing table on another CPU than the one it names,
an entry names its own (`machine`), and `run`'s estimate and the docs' table say so.

    python scripts/measure_trial_cost.py [--benchmarks ptb,wt2,...] [--algos rs,hb,...] [--workers N] [--out PATH]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.core.catalog import BENCHMARKS  # noqa: E402
from nasbench_cli.harness.cost_estimate import MEASURED, measurements, workers_of  # noqa: E402
from benchmarks.core.atomic import write_json_atomic  # noqa: E402
from optimizers.registry import ALGORITHMS  # noqa: E402


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def measure(benchmark: str, algo: str, multi_objective: bool, budget: float | None = None,
            workers: int = 1) -> dict | None:
    """{"compute_s", "budget", "workers"} of one trial, or None where the benchmark refuses the algorithm."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", algo, "--benchmark", benchmark,
                   "--trials", "1", "--jobs", "1", "--workers", str(workers), "--json", "--out", out]
        if budget is not None:
            counts = BENCHMARKS[benchmark].clock != "hours"
            command += ["--budget-evals" if counts else "--budget-hours", f"{int(budget) if counts else budget:g}"]
        if multi_objective:
            command += ["--objectives", ",".join(BENCHMARKS[benchmark].objectives[:2])]
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if done.returncode == 2:
            return None
        if done.returncode != 0:
            raise SystemExit(f"{benchmark} {algo}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
        result = json.loads(done.stdout)
    (summary,) = result["algorithms"].values()
    (budget,) = [value for key, value in result.items() if key.startswith("budget_")]   # hours, evaluations, checkpoints
    return {"compute_s": round(summary["compute_s_per_trial"], 2), "budget": budget, "workers": workers}


def put(costs: dict, benchmark: str, algo: str, entry: dict) -> None:
    """Record `entry` for (benchmark, algo), replacing a measurement at the same workers and budget and
    keeping those at other worker counts or budgets (the entry becomes a list of them, by workers, then
    budget)."""
    same = (entry["workers"], entry["budget"])
    kept = [m for m in measurements(costs.get(benchmark, {}).get(algo)) if (workers_of(m), m.get("budget")) != same]
    both = sorted(kept + [entry], key=lambda m: (workers_of(m), m.get("budget") or 0.0))
    costs.setdefault(benchmark, {})[algo] = both[0] if len(both) == 1 else both


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmarks", default=",".join(name for name, spec in BENCHMARKS.items() if spec.clock != "updates"),
                        help="comma list (default: every benchmark but the cost-aware nmt-*-updates, whose estimates "
                             "read nmt-*'s entries)")
    parser.add_argument("--algos", default=None, help="comma list (default: every built-in algorithm)")
    parser.add_argument("--out", type=Path, default=MEASURED, help=f"table to write (default {MEASURED.relative_to(ROOT)})")
    parser.add_argument("--budget", type=float, default=None,
                        help="measure at this budget (the benchmark's clock units) instead of the default, for an "
                             "algorithm too slow to measure there; kept beside measurements at other budgets, and `run` "
                             "scales between them along a power law (linearly from one)")
    parser.add_argument("--workers", type=int, default=1,
                        help="simulated workers (default 1); a measurement at more workers is kept beside the "
                             "one-worker one, and `run` scales between them (the docs' table shows one worker)")
    args = parser.parse_args()
    algos = args.algos.split(",") if args.algos else list(ALGORITHMS)
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    machine = cpu_name()
    table = header(previous, machine)
    for benchmark in args.benchmarks.split(","):
        for algo in algos:
            entry = measure(benchmark, algo, algo in MULTI_OBJECTIVE, args.budget, args.workers)
            if entry is not None:
                put(table["costs"], benchmark, algo, on_machine(entry, table, machine))
                print(f"{benchmark:6} {algo:10} {entry['compute_s']:8.2f} CPU s per trial", flush=True)
                write_json_atomic(args.out, table)    # after each one: an interrupted run keeps what it measured


def header(previous: dict, machine: str) -> dict:
    """The table to write: `previous`'s, whose machine and date stay those of its entries; a new one (no
    previous table) is this machine's, today."""
    if previous.get("machine"):
        return {**previous, "costs": previous.get("costs", {})}
    return {"machine": machine, "measured": datetime.date.today().isoformat(),
            "how": "python scripts/measure_trial_cost.py: one trial at the default budget (unless the entry's "
                   "budget says otherwise), 1 worker (unless it says otherwise), --jobs 1",
            "costs": previous.get("costs", {})}


def on_machine(entry: dict, table: dict, machine: str) -> dict:
    """`entry`, naming the CPU it was measured on where that is not the table's (`run` and the docs say so)."""
    return entry if machine == table.get("machine") else {**entry, "machine": machine}


MULTI_OBJECTIVE = {name for name, (description, _) in ALGORITHMS.items() if "needs --objectives" in description}

if __name__ == "__main__":
    main()
