"""How long the suite report's stratified-bootstrap intervals take: `stratified_interval` (the resamples
stacked, the statistic evaluated once per row) against the one-at-a-time loop it replaced (draw a
resample, evaluate the statistic, 2,000 times), in the same run, on random tasks shaped like a suite's.

    .venv/bin/python scripts/bench_bootstrap.py [--cases 30] [--seed 0]

Prints CPU seconds per interval of each and their ratio, for the mean and the IQM, and checks that both
give the same interval to the last bit.
"""
import argparse
import time

import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np


def one_at_a_time(groups, statistic, seed: int) -> tuple[float, float]:
    """The loop `stratified_interval` replaced: a resample drawn and scored at a time."""
    from nasbench_cli.results.suite_report import BOOTSTRAP_RESAMPLES

    rng = np.random.default_rng(seed)
    values = [statistic(np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups]))
              for _ in range(BOOTSTRAP_RESAMPLES)]
    tail = (1 - 0.95) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="bench_bootstrap.py [--cases N] [--seed S]")
    parser.add_argument("--cases", type=int, default=30, help="random suites (1-25 tasks of 1-30 trials each)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from nasbench_cli.results.suite_report import iqm, stratified_interval

    rng = np.random.default_rng(args.seed)
    suites = [[np.abs(rng.normal(0.3, 0.2, int(rng.integers(1, 31)))) * rng.uniform(0.2, 3)
               for _ in range(int(rng.integers(1, 26)))] for _ in range(args.cases)]
    for name, statistic in (("mean", np.mean), ("iqm", iqm)):
        seconds = {"stacked": 0.0, "one at a time": 0.0}
        for k, groups in enumerate(suites):
            start = time.process_time()
            ours = stratified_interval(groups, statistic, seed=k)
            middle = time.process_time()
            reference = one_at_a_time(groups, statistic, seed=k)
            seconds["stacked"] += middle - start
            seconds["one at a time"] += time.process_time() - middle
            assert ours == reference, (name, k, ours, reference)
        stacked, loop = (seconds[key] / args.cases for key in ("stacked", "one at a time"))
        print(f"{name}: {stacked:.3f} CPU s per interval stacked, {loop:.3f} one at a time: {loop / stacked:.1f}x; "
              f"the same {args.cases} intervals to the bit")


if __name__ == "__main__":
    main()
