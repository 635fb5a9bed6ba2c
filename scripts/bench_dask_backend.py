"""Overhead of the Dask backend against the local one, on a fixed suite, in the same run.

The suite (default: the paper's eight algorithms x 4 trials x 200 simulated hours on PTB) is run as whole
`nasbench run` commands, alternately with `--backend local --jobs N` and `--backend dask --scheduler
local:N`, each into a fresh results folder, `--repeats` times. Prints the median wall time of each, the
Dask overhead per trial and as a share of the suite, checks that both wrote the same records (timings
aside), and the bytes that travel: the scattered inputs (once per worker, compressed as for a remote
cluster), one task's arguments and one record back (Dask's own serialisation, mean over the suite's trials).

With `--results DIR` (30-trial, 1000 h results of the eight), it also estimates the full suite's wall time
on a cluster of `--cores` single-threaded workers: the recorded CPU seconds per trial, scheduled longest
first on the cores (LPT), plus the measured Dask overhead per trial.

    python scripts/bench_dask_backend.py [--workers 2] [--repeats 2] [--trials 4] [--hours 200]
                                         [--results results --cores 32] [--json]
"""
import argparse
import heapq
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TIMINGS = ("compute_s", "wall_s")


def run_suite(args, backend: str, out: Path) -> float:
    """Wall seconds of one `nasbench run` of the suite with `backend`."""
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", args.algo, "--trials", str(args.trials),
               "--budget-hours", str(args.hours), "--out", str(out), "--json"]
    command += ["--jobs", str(args.workers)] if backend == "local" else \
        ["--backend", "dask", "--scheduler", f"local:{args.workers}"]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{backend} run failed: {result.stderr.strip().splitlines()[-1:]}")
    return elapsed


def records(out: Path) -> dict:
    return {str(p.relative_to(out)): {k: v for k, v in json.loads(p.read_text()).items() if k not in TIMINGS}
            for p in sorted(out.rglob("trial-*.json"))}


def transfer_bytes(args, out: Path) -> dict:
    """Serialised sizes (Dask's protocol) of what travels: inputs once per worker, per task spec and record."""
    from distributed.protocol import serialize_bytes

    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.harness.dask_backend import gather_inputs
    from nasbench_cli.harness.run_description import describe_run
    from nasbench_cli.harness.runner import plan_trials
    from optimizers.registry import parse_algo_list

    algos = parse_algo_list(args.algo)
    benchmark = load_benchmark("ptb")
    inputs = gather_inputs(benchmark, algos, {})   # as sent to a remote cluster (compressed)
    specs, _ = plan_trials(describe_run(algos, "ptb", trials=args.trials, budget_hours=args.hours,
                                        out=out / "unused", overwrite=True))
    files = sorted(out.rglob("trial-*.json"))
    record_sizes = [len(serialize_bytes(json.loads(p.read_text()))) for p in files]
    _, features, scores = inputs.unpack()
    return {"inputs_once_per_worker": len(serialize_bytes(inputs)),
            "features_shipped": sorted(features), "scores_shipped": sorted(scores),
            "task_arguments_per_trial": statistics.mean(len(serialize_bytes(s)) for s in specs),
            "record_back_per_trial": statistics.mean(record_sizes)}


def cluster_estimate(results: Path, algos: str, cores: int, overhead_per_trial_s: float) -> dict:
    """Makespan (seconds) of the recorded trials' CPU times on `cores` workers, longest first."""
    from nasbench_cli.results.files import load_trial
    from optimizers.registry import algorithm_name, parse_algo_list

    times = []
    for algo in parse_algo_list(algos):
        times += [load_trial(p)["compute_s"] + overhead_per_trial_s
                  for p in sorted((results / "ptb" / algorithm_name(algo)).glob("trial-*.json"))]
    finish = [0.0] * cores
    for t in sorted(times, reverse=True):
        heapq.heappush(finish, heapq.heappop(finish) + t)
    return {"trials": len(times), "cpu_s_total": sum(times), "cores": cores, "wall_s": max(finish),
            "longest_trial_s": max(times), "one_core_s": sum(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", default="all")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--hours", type=float, default=200.0)
    parser.add_argument("--workers", type=int, default=2, help="local processes, and LocalCluster workers")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--results", type=Path, default=None, help="30-trial results of the suite's algorithms")
    parser.add_argument("--cores", type=int, default=32)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    walls = {"local": [], "dask": []}
    scratch = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        for repeat in range(args.repeats):
            order = ("local", "dask") if repeat % 2 == 0 else ("dask", "local")
            for backend in order:
                out = scratch / f"{backend}-{repeat}"
                walls[backend].append(run_suite(args, backend, out))
        same = records(scratch / "local-0") == records(scratch / "dask-0")
        sizes = transfer_bytes(args, scratch / "dask-0")
        n_trials = len(records(scratch / "dask-0"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    local, dask = statistics.median(walls["local"]), statistics.median(walls["dask"])
    report = {"suite": {"algo": args.algo, "trials_per_algo": args.trials, "hours": args.hours, "trials": n_trials,
                        "workers": args.workers, "repeats": args.repeats},
              "wall_s": walls, "median_local_s": local, "median_dask_s": dask,
              "overhead_per_trial_s": (dask - local) / n_trials, "overhead_share": (dask - local) / local,
              "same_records": same, "bytes": sizes}
    if args.results is not None:
        report["cluster_estimate"] = cluster_estimate(args.results, args.algo, args.cores,
                                                      max(0.0, report["overhead_per_trial_s"]))
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"suite: --algo {args.algo}, {args.trials} trials x {args.hours:g} h = {n_trials} trials; "
          f"{args.workers} processes / LocalCluster workers; {args.repeats} repeats, alternating")
    print(f"  local backend  median {local:7.1f} s  ({', '.join(f'{w:.1f}' for w in walls['local'])})")
    print(f"  dask backend   median {dask:7.1f} s  ({', '.join(f'{w:.1f}' for w in walls['dask'])})")
    print(f"  dask overhead  {report['overhead_per_trial_s']:+.3f} s per trial, "
          f"{100 * report['overhead_share']:+.1f}% of the suite's wall time")
    print(f"  same records (timings aside): {same}")
    print(f"  bytes: inputs {sizes['inputs_once_per_worker'] / 1e6:.1f} MB once per worker "
          f"(features {sizes['features_shipped']}, scores {sizes['scores_shipped']}); per trial "
          f"{sizes['task_arguments_per_trial']:.0f} B of task arguments out, "
          f"{sizes['record_back_per_trial'] / 1e3:.1f} kB of record back")
    if args.results is not None:
        e = report["cluster_estimate"]
        print(f"  full suite from {args.results}: {e['trials']} trials, {e['cpu_s_total'] / 60:.0f} CPU min; "
              f"on {e['cores']} cores {e['wall_s'] / 60:.1f} min wall (longest trial {e['longest_trial_s']:.0f} s)")


if __name__ == "__main__":
    main()
