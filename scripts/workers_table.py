"""Mean regret at fixed wall-clock times for runs with simulated workers, per worker count.

For each worker count K and each time (hours), the mean regret over trials of every algorithm run with
K workers (label `algo` for K = 1, `algo@Kw` otherwise), and for each the two-sided Mann-Whitney test
against the lowest mean at that time and K, Holm-corrected within that (K, time); `*` marks p < 0.05.
A trial without an incumbent yet counts as +inf (worst) in the test and is left out of the mean.
"busy": the share of worker time spent on jobs from 0 until the trial's last job ended (mean over
trials), from the job log; "last job": the mean simulated hours when the last job ended.

    python scripts/workers_table.py RESULTS_DIR --algos hb,asha,ahb,rs50e,re,bo10d --workers 1,4,16 \
        [--hours 10,100,1000] [--benchmark ptb]
"""
import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from nasbench_cli.results import aggregate  # noqa: E402
from nasbench_cli.results.report_table import holm, mann_whitney  # noqa: E402
from nasbench_cli.results.files import load_results  # noqa: E402
from nasbench_cli.results.record import run_label  # noqa: E402


def regrets_at(records, hours: float) -> np.ndarray:
    """Regret of each trial at `hours` of simulated wall clock (+inf before its first incumbent)."""
    values = aggregate.regret_matrix(records, [hours * aggregate.SECONDS_PER_HOUR])[:, 0]
    return np.where(np.isnan(values), math.inf, values)


def utilisation(records) -> tuple[float, float]:
    """(mean busy share until the last job ended, mean hours of the last job's end) over trials."""
    shares, ends = [], []
    for record in records:
        end = float(record["trajectory"]["time_s"][-1]) if record["trajectory"]["time_s"] else 0.0
        workers = int(record.get("workers") or 1)
        if end > 0 and "jobs" in record:
            shares.append(float(aggregate.busy_seconds(record, [end])[0]) / (workers * end))
            ends.append(end / aggregate.SECONDS_PER_HOUR)
    return (float(np.mean(shares)), float(np.mean(ends))) if shares else (math.nan, math.nan)


def table(results, benchmark: str, algos: list[str], workers: list[int], hours: list[float]) -> list[str]:
    runs = results.runs[benchmark]
    lines = ["| workers | algorithm | trials | " + " | ".join(f"regret at {h:g} h" for h in hours)
             + " | busy | last job (h) |", "|---:|---|---:|" + "---:|" * (len(hours) + 2)]
    for k in workers:
        labels = [run_label(a, k) for a in algos if run_label(a, k) in runs]
        cells = {label: [] for label in labels}
        for h in hours:
            values = {label: regrets_at(runs[label], h) for label in labels}
            means = {label: float(np.mean(v[np.isfinite(v)])) if np.isfinite(v).any() else math.inf
                     for label, v in values.items()}
            best = min(labels, key=lambda label: means[label])
            others = [label for label in labels if label != best]
            p = dict(zip(others, holm([mann_whitney(values[o], values[best]) for o in others])))
            for label in labels:
                mark = "best" if label == best else f"p={p[label]:.2g}{'*' if p[label] < 0.05 else ''}"
                cells[label].append(f"{means[label]:.4f} ({mark})")
        for label in labels:
            busy, last = utilisation(runs[label])
            lines.append(f"| {k} | {label.split('@')[0]} | {len(runs[label])} | " + " | ".join(cells[label])
                         + f" | {busy:.0%} | {last:.0f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir")
    parser.add_argument("--algos", required=True)
    parser.add_argument("--workers", default="1,4,16")
    parser.add_argument("--hours", default="10,100,1000")
    parser.add_argument("--benchmark", default="ptb")
    args = parser.parse_args()
    algos = [a for a in args.algos.split(",") if a]
    workers = [int(k) for k in args.workers.split(",")]
    hours = [float(h) for h in args.hours.split(",")]
    results = load_results(args.results_dir, [args.benchmark])
    print("\n".join(table(results, args.benchmark, algos, workers, hours)))


if __name__ == "__main__":
    main()
