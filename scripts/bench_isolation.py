"""Cost of `nasbench run --isolate` per job: the same trials run in-process and isolated, in this run.

    python scripts/bench_isolation.py [--algo hb] [--trials 3] [--hours 1000]

Prints jobs per trial, wall seconds per trial both ways, and the added cost per job (isolated − plain,
divided by jobs), plus the child's start-up (a trial with one job). Trajectories are checked equal.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.core.registry import load_benchmark  # noqa: E402
from nasbench_cli.harness.isolation import IsolatedAlgorithm  # noqa: E402
from nasbench_cli.harness.trial import trial_record  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", default="hb")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--hours", type=float, default=1000.0)
    args = parser.parse_args()
    bench = load_benchmark("ptb", test_losses=False)
    plain_s = isolated_s = 0.0
    jobs = 0
    for seed in range(args.trials):
        start = time.perf_counter()
        a = trial_record(bench, make_algorithm(args.algo, None, "ptb"), args.algo, None, seed, seed, args.hours * 3600)
        plain_s += time.perf_counter() - start
        start = time.perf_counter()
        proxy = IsolatedAlgorithm(args.algo, {}, "ptb", make_algorithm(args.algo, None, "ptb"))
        b = trial_record(bench, proxy, args.algo, None, seed, seed, args.hours * 3600)
        isolated_s += time.perf_counter() - start
        assert a["trajectory"] == b["trajectory"], "isolation changed a trajectory"
        jobs += a["n_evaluations"]
    start = time.perf_counter()
    proxy = IsolatedAlgorithm("rs50e", {}, "ptb", make_algorithm("rs50e", None, "ptb"))
    trial_record(bench, proxy, "rs50e", None, 0, 0, 1.0)
    startup = time.perf_counter() - start
    print(f"{args.algo}, {args.trials} trials, {jobs / args.trials:.0f} jobs per trial (identical trajectories)")
    print(f"wall per trial: plain {plain_s / args.trials:.3f} s, isolated {isolated_s / args.trials:.3f} s")
    print(f"added per job: {(isolated_s - plain_s) / jobs * 1e6:.0f} µs (child start-up included); "
          f"a one-job isolated trial: {startup:.2f} s")


if __name__ == "__main__":
    main()
