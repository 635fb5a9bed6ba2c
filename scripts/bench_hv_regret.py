"""How long the hypervolume-regret curve of a 20,000-job PTB trial takes: incremental (what trials
use, `benchmarks.core.front_regret`) against a naive recompute (every job: the non-dominated set of
everything trained so far, then its hypervolume, both with moocore), in the same run.

    .venv/bin/python scripts/bench_hv_regret.py [--jobs 20000] [--naive-jobs 20000]

The job sequence is a seeded stand-in for a long multi-fidelity trial: each job takes a random
architecture (new or seen before) one to ten epochs further. Prints seconds per curve and the ratio,
and checks that both curves agree; then the time of the `hv-range` and `igd+` curves of the same jobs
(`report --indicator`, target under 1 s each).
"""
import argparse
import time

import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np


def job_sequence(search, jobs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    trained = np.zeros(search.n, dtype=np.int64)
    rows = rng.integers(0, search.n, size=jobs)
    reached = []
    for row in rows.tolist():
        trained[row] = min(search.max_epochs, trained[row] + int(rng.integers(1, 11)))
        reached.append(int(trained[row]))
    return rows, reached


def naive_curve(benchmark, space, rows, reached):
    from benchmarks.core.environment import _prefix_index
    from benchmarks.core.pareto import hypervolume, nondominated

    index = _prefix_index(benchmark.search)
    latest: dict = {}
    curve = []
    for row, r in zip(rows.tolist(), reached):
        if np.isfinite(index.prefix_best_val[row, r]):
            latest[row] = r
        if not latest:
            curve.append(None)
            continue
        trained = np.fromiter(latest, dtype=np.int64)
        epochs = np.array([index.prefix_best_epoch[t, latest[t]] for t in trained.tolist()])
        seen = space.static[trained].copy()
        seen[:, space.loss_column] = index.prefix_best_val[trained, [latest[t] for t in trained.tolist()]]
        ok = space.feasible[trained] & np.isfinite(seen).all(axis=1)
        trained, epochs, seen = trained[ok], epochs[ok], seen[ok]
        front = nondominated(seen)
        scored = seen[front].copy()
        scored[:, space.loss_column] = benchmark.test_loss[trained[front], epochs[front] - 1]
        curve.append(space.true_hv - hypervolume(space.normalise(scored), space.reference))
    return curve


def main() -> None:
    from benchmarks.core.front_regret import front_trajectory
    from benchmarks.core.pareto import objective_space
    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.results.indicators import indicator_measure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--naive-jobs", type=int, default=20_000, help="jobs of the naive recompute (its time scales up)")
    args = parser.parse_args()
    ptb = load_benchmark("ptb")
    rows, reached = job_sequence(ptb.search, args.jobs)
    for objectives in (("logppl", "params"), ("logppl", "params", "epoch_s")):
        space = objective_space(ptb, objectives)
        started = time.perf_counter()
        fast = front_trajectory(ptb, space, rows, reached)["regret"]
        fast_s = time.perf_counter() - started
        m = min(args.naive_jobs, args.jobs)
        started = time.perf_counter()
        slow = naive_curve(ptb, space, rows[:m], reached[:m])
        slow_s = time.perf_counter() - started
        worst = max(abs(a - b) for a, b in zip(fast[:m], slow) if a is not None)
        print(f"{','.join(objectives):24s} incremental {fast_s:6.3f} s for {args.jobs} jobs; naive {slow_s:7.2f} s for "
              f"{m} jobs ({slow_s / fast_s * args.jobs / m:5.0f}x per job); largest difference {worst:.1e}")
        for name in ("hv-range", "igd+"):      # `report --indicator`'s curves: the same replay, another measure
            started = time.perf_counter()
            front_trajectory(ptb, space, rows, reached, indicator_measure(ptb, space, name))
            print(f"{'':24s} {name:8s} curve {time.perf_counter() - started:6.3f} s for {args.jobs} jobs "
                  f"(target: under 1 s; table range and true front included)")


if __name__ == "__main__":
    main()
