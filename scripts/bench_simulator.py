"""Speed of the ask/tell simulator: overhead per job, a 32-worker ASHA trial, and syne-tune's simulator.

1. Overhead per job (µs): random search (rs10e, 1000 h, one worker) run by the simulator against a
   plain loop that draws the same permutation and calls `Environment.train` until the budget is spent
   (the pre-ask/tell way, the same trajectory), in the same process, median of `--repeats`.
2. One 1000-hour `asha` trial at 32 workers, CPU seconds (median of `--repeats`; target < 0.5 s).
3. `--synetune PYTHON`: the same random-search schedule (4 workers, `--synetune-hours` of simulated
   wall clock, 50 epochs each) on syne-tune's `SimulatorBackend`, fed a tabular blackbox built from
   the same logs, run by PYTHON (an interpreter with syne-tune 0.16 installed in its own
   environment, never a dependency of nasbench; `scripts/synetune_random_search.py` is what it runs);
   its real seconds next to ours for the same schedule, and the ratio.

    python scripts/bench_simulator.py [--repeats 5] [--synetune /tmp/synetune-venv/bin/python] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.core.environment import BudgetExhausted, Environment  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402
from nasbench_cli.harness.simulator import run_on  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402

HOUR = 3600.0


def plain_loop(search, seed: int, budget_s: float, epochs: int) -> Environment:
    """Random search as a plain loop of `Environment.train` calls (one worker)."""
    env = Environment(search, budget_s)
    train = env.train
    try:
        for row in np.random.default_rng(seed).permutation(search.n).tolist():
            train(row, epochs)
    except BudgetExhausted:
        pass
    return env


def overhead_per_job(search, repeats: int) -> dict:
    plain, simulated, jobs = [], [], 0
    for k in range(repeats):
        start = time.process_time()
        a = plain_loop(search, k, 1000 * HOUR, 10)
        plain.append(time.process_time() - start)
        env = Environment(search, 1000 * HOUR)
        start = time.process_time()
        run_on(env, make_algorithm("rs10e"), k, workers=1)
        simulated.append(time.process_time() - start)
        assert env.history == a.history, "the simulator must reproduce the plain loop"
        jobs = len(env.history.arch)
    plain_s, simulated_s = statistics.median(plain), statistics.median(simulated)
    return {"jobs_per_trial": jobs, "plain_train_loop_s": plain_s, "simulator_s": simulated_s,
            "plain_us_per_job": 1e6 * plain_s / jobs, "simulator_us_per_job": 1e6 * simulated_s / jobs,
            "overhead_us_per_job": 1e6 * (simulated_s - plain_s) / jobs}


def asha_trial(search, repeats: int, workers: int = 32) -> dict:
    times, jobs = [], 0
    for k in range(repeats):
        env = Environment(search, 1000 * HOUR)
        start = time.process_time()
        run_on(env, make_algorithm("asha"), k, workers=workers)
        times.append(time.process_time() - start)
        jobs = len(env.history.arch)
    return {"workers": workers, "jobs": jobs, "cpu_s_median": statistics.median(times), "cpu_s_max": max(times)}


def ours_random_search(search, hours: float, workers: int, repeats: int) -> dict:
    times, jobs = [], 0
    for k in range(repeats):
        env = Environment(search, hours * HOUR)
        start = time.perf_counter()
        run_on(env, make_algorithm("rs50e"), k, workers=workers)
        times.append(time.perf_counter() - start)
        jobs = len(env.history.arch)
    return {"real_s_median": statistics.median(times), "jobs": jobs}


def synetune(python: str, benchmark, hours: float, workers: int) -> dict:
    """Run scripts/synetune_random_search.py under `python` on a tabular export of the benchmark."""
    search = benchmark.search
    with tempfile.TemporaryDirectory(prefix="nasbench-synetune-") as folder:
        table = Path(folder) / "table.npz"
        np.savez(table, val_loss=search.val_loss, wall_time_s=search.wall_time_s, n_epochs=search.n_epochs)
        script = Path(__file__).with_name("synetune_random_search.py")
        result = subprocess.run([python, str(script), str(table), str(hours), str(workers)], capture_output=True,
                                text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if result.returncode != 0:
            raise SystemExit(f"syne-tune run failed:\n{result.stderr[-3000:]}")
        return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--synetune", metavar="PYTHON", help="interpreter with syne-tune 0.16 installed")
    parser.add_argument("--synetune-hours", type=float, default=200.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    benchmark = load_benchmark("ptb")
    figures = {"overhead": overhead_per_job(benchmark.search, args.repeats),
               "asha_32_workers_1000h": asha_trial(benchmark.search, args.repeats)}
    if args.synetune:
        theirs = synetune(args.synetune, benchmark, args.synetune_hours, 4)
        ours = ours_random_search(benchmark.search, args.synetune_hours, 4, args.repeats)
        figures["synetune_random_search_4_workers"] = {
            "simulated_hours": args.synetune_hours, "synetune_real_s": theirs["real_s"],
            "synetune_trials": theirs["trials"], "ours_real_s": ours["real_s_median"], "ours_jobs": ours["jobs"],
            "speedup": theirs["real_s"] / ours["real_s_median"]}
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    o = figures["overhead"]
    print(f"rs10e, 1000 h, 1 worker ({o['jobs_per_trial']} jobs): plain Environment.train loop "
          f"{o['plain_us_per_job']:.1f} µs/job, simulator {o['simulator_us_per_job']:.1f} µs/job, "
          f"overhead {o['overhead_us_per_job']:.1f} µs/job")
    a = figures["asha_32_workers_1000h"]
    print(f"asha, 1000 h, 32 workers ({a['jobs']} jobs): {a['cpu_s_median']:.3f} s CPU (median of "
          f"{args.repeats}, max {a['cpu_s_max']:.3f} s); target < 0.5 s")
    if "synetune_random_search_4_workers" in figures:
        s = figures["synetune_random_search_4_workers"]
        print(f"random search, 4 workers, {s['simulated_hours']:g} simulated hours: syne-tune SimulatorBackend "
              f"{s['synetune_real_s']:.2f} s ({s['synetune_trials']} trials), ours {s['ours_real_s']:.4f} s "
              f"({s['ours_jobs']} jobs): {s['speedup']:.0f}x")


if __name__ == "__main__":
    main()
