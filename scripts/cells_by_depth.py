"""How deep each run's trials had trained their cells by a simulated hour: the mean, over trials, of the
cells started and of those trained to at least each of `--epochs` epochs (read from the trials' job logs).

    nasbench run --algo lcbo --set promote_top=0 --label lcbo-counts --workers 4 --trials 30 --budget-hours 12 --out R
    nasbench run --algo lcbo --workers 4 --trials 30 --budget-hours 12 --out R
    python scripts/cells_by_depth.py R --at 10 --epochs 2,9,50
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from nasbench_cli.results.files import load_many  # noqa: E402


def depths(record: dict, until_s: float) -> dict:
    """Epochs each architecture had been trained to by `until_s` simulated seconds."""
    trained = {}
    trajectory = record["trajectory"]
    for end_s, arch, epochs in zip(trajectory["time_s"], trajectory["arch"], trajectory["epochs"]):
        if end_s <= until_s:
            trained[arch] = max(trained.get(arch, 0), epochs)
    return trained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results folders of `nasbench run`")
    parser.add_argument("--at", type=float, default=10.0, help="simulated hours")
    parser.add_argument("--epochs", default="2,9,50", help="comma list of epoch depths to count")
    args = parser.parse_args()
    levels = [int(e) for e in args.epochs.split(",")]
    results = load_many(args.results)
    for benchmark in results.benchmarks:
        print(f"{benchmark} at {args.at:g} h: mean cells started | trained to >= "
              + ", ".join(map(str, levels)) + " epochs")
        for label, records in results.runs[benchmark].items():
            counts = []
            for record in records:
                reached = np.array(list(depths(record, args.at * 3600.0).values()), dtype=int)
                counts.append([len(reached)] + [int((reached >= e).sum()) for e in levels])
            mean = np.mean(counts, axis=0)
            print(f"  {label} ({len(records)} trials): {mean[0]:.1f} | " + ", ".join(f"{m:.1f}" for m in mean[1:]))


if __name__ == "__main__":
    main()
