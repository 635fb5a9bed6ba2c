"""CPU seconds per trial of the library adapters (optuna, dehb, smac-mf), next to hb as a reference.

One trial each (seed 0, one worker) of `--hours` simulated hours on PTB, in this process, with
`--set ALGO.KEY=VALUE` overrides (e.g. `--set smac-mf.retrain_after=8`, SMAC's own default, to see
what `retrain_after=32` saves). Prints CPU seconds, jobs run and final regret per algorithm.

    python scripts/bench_library_adapters.py [--hours 1000] [--algo optuna,dehb,smac-mf,hb] [--set ...] [--json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nasbench_cli.harness.trial import run_trial  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=1000.0)
    parser.add_argument("--algo", default="optuna,dehb,smac-mf,hb")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="ALGO.KEY=VALUE")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    overrides: dict = {}
    for item in args.settings:
        key, value = item.split("=", 1)
        algo, key = key.split(".", 1)
        overrides.setdefault(algo, {})[key] = value
    rows = {}
    for algo in [a.strip() for a in args.algo.split(",") if a.strip()]:
        started = time.process_time()
        record = run_trial("ptb", algo, 0, 0, args.hours * 3600.0, overrides.get(algo))
        rows[algo] = {"cpu_s": time.process_time() - started, "jobs": record["n_evaluations"],
                      "final_regret": record["final_regret"], "settings": record["settings"]}
    if args.json:
        print(json.dumps({"hours": args.hours, "algorithms": rows}, indent=2))
        return
    print(f"one trial, seed 0, {args.hours:g} simulated hours, one worker (CPU seconds incl. set-up)")
    for algo, row in rows.items():
        print(f"  {algo:<8} {row['cpu_s']:8.1f} s  {row['jobs']:5d} jobs  final regret {row['final_regret']:.4f}")


if __name__ == "__main__":
    main()
