"""Replay recorded trials call by call through the NAS-Bench-NLP release's Environment semantics.

The release's `nas_environment.py` (fmsnew/nas-bench-nlp-release), ported here only to measure the
difference, never used by nasbench: `simulated_train(arch, E)` with E' = min(E, n - 1) for a log of n
epochs sets the architecture's state to `wall_time = sum(wall_times[:E'])` and reveals the validation
losses at indices 0..E' (epochs 1..E'+1); the total time is the sum over architectures; the incumbent is
the revealed (architecture, epoch) of lowest validation loss, the first seen kept on a tie. So a call for
E < n epochs shows one epoch more than it charges, and the last epoch of every log is never charged.

For each result file of `--algo` in RESULTS, the trial's own calls (architecture, epochs, in job order)
are replayed both ways on the same data; printed per algorithm: the release's total time against
nasbench's (mean ratio), final regret on both (mean over trials, and the range of the per-trial
difference), and on how many trials the final incumbent differs.

    python scripts/release_semantics_replay.py results --algo rs10e,hb,rs50e [--json]
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402


def release_replay(benchmark, archs, epochs) -> tuple[float, float]:
    """(total seconds, final regret) of the calls under the release's semantics."""
    search = benchmark.search
    states: dict = {}
    best_row, best_index = -1, -1
    for arch, wanted in zip(archs, epochs):
        row = search.index_of(arch)
        n = int(search.n_epochs[row])
        if row not in states or wanted > states[row][0]:
            last = min(int(wanted), n - 1)
            wall = float(np.sum(search.wall_time_s[row, :last])) if last > 0 else 0.0
            states[row] = (last, wall)
            val = search.val_loss[row, :last + 1] if last >= 0 else np.empty(0)
            if np.sum(~np.isnan(val)) > 0:
                epoch_index = int(np.nanargmin(val))
                if best_row == -1 or search.val_loss[best_row, best_index] > val[epoch_index]:
                    best_row, best_index = row, epoch_index
    total = sum(wall for _, wall in states.values())
    regret = float(benchmark.test_loss[best_row, best_index] - benchmark.l_star) if best_row >= 0 else float("nan")
    return total, regret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--algo", default="rs10e,hb,rs50e")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from benchmarks.core.registry import load_benchmark
    from nasbench_cli.results.files import load_trial

    benchmark = load_benchmark("ptb")
    report = {}
    for algo in [a.strip() for a in args.algo.split(",") if a.strip()]:
        rows = []
        for path in sorted((args.results / "ptb" / algo).glob("trial-*.json")):
            record = load_trial(path)
            traj = record["trajectory"]
            total, regret = release_replay(benchmark, traj["arch"], traj["epochs"])
            ours_time = float(record["simulated_time_s"])   # one worker: the total charged time
            rows.append({"time_ratio": total / ours_time, "release_regret": regret,
                         "nasbench_regret": record["final_regret"], "calls": len(traj["arch"])})
        if not rows:
            continue
        diff = np.array([r["nasbench_regret"] - r["release_regret"] for r in rows])
        report[algo] = {"trials": len(rows), "calls_per_trial": float(np.mean([r["calls"] for r in rows])),
                        "time_ratio_mean": float(np.mean([r["time_ratio"] for r in rows])),
                        "nasbench_regret_mean": float(np.mean([r["nasbench_regret"] for r in rows])),
                        "release_regret_mean": float(np.mean([r["release_regret"] for r in rows])),
                        "regret_difference_min": float(diff.min()), "regret_difference_max": float(diff.max()),
                        "trials_with_other_final_regret": int((np.abs(diff) > 1e-12).sum())}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"the same calls through the release's semantics ({args.results}, ptb)")
    for algo, r in report.items():
        print(f"  {algo:<6} {r['trials']} trials, {r['calls_per_trial']:.0f} calls each: release time "
              f"{100 * (r['time_ratio_mean'] - 1):+.2f}%; final regret nasbench {r['nasbench_regret_mean']:.4f}, "
              f"release {r['release_regret_mean']:.4f} (per trial nasbench − release "
              f"{r['regret_difference_min']:+.4f}…{r['regret_difference_max']:+.4f}; "
              f"{r['trials_with_other_final_regret']} trials differ)")


if __name__ == "__main__":
    main()
