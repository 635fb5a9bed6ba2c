"""Mean regret of every run at several budgets, and how one run fares against the best of the others.

    python scripts/anytime_table.py RESULTS_DIR... [--at 3,10,30,100,300,1000] [--focus lcbo] [--exclude TEXT]

Per benchmark and worker count: a Markdown table (one row per run label, one column per budget: the
mean regret of the trials truncated there, the lowest in bold; – past a run's budget), then per budget whether `--focus` has
the lowest mean (or is tied, as printed), the runner-up, and two-sided Mann-Whitney p-values of `--focus` against every other
run at that worker count, Holm-corrected over them (the runner-up's is printed).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from nasbench_cli.results import aggregate  # noqa: E402
from nasbench_cli.results.files import load_many, split_label  # noqa: E402
from nasbench_cli.results.report_table import holm, mann_whitney  # noqa: E402
from nasbench_cli.results.truncate import record_at  # noqa: E402


def reaches(records, time_s: float) -> bool:
    """Whether every trial's budget reaches `time_s` (seconds); a shorter run shows – there, not its end."""
    return all(r["budget_s"] >= time_s * (1 - 1e-9) for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--at", default="3,10,30,100,300,1000")
    parser.add_argument("--focus", default="lcbo")
    parser.add_argument("--exclude", action="append", default=[],
                        help="leave out the labels containing this text (repeatable), e.g. score_split")
    parser.add_argument("--every", action="store_true",
                        help="also print the focus's Holm-corrected p against every other run, not only the runner-up")
    args = parser.parse_args()
    times = [float(t) for t in args.at.split(",")]
    results = load_many(args.results)
    for benchmark in results.benchmarks:
        runs = {label: rs for label, rs in results.runs[benchmark].items()
                if not any(text in label for text in args.exclude)}
        unit = aggregate.clock_unit_s(benchmark)
        for workers in sorted({split_label(label)[1] for label in runs}):
            labels = [label for label in runs if split_label(label)[1] == workers]
            finals = {t: {label: aggregate.final_regrets([record_at(r, t * unit) for r in runs[label]])
                          if reaches(runs[label], t * unit) else np.full(len(runs[label]), np.nan)
                          for label in labels} for t in times}
            means = {t: {label: float(np.nanmean(np.where(np.isfinite(v), v, np.nan))) if np.isfinite(v).any()
                         else np.inf for label, v in finals[t].items()} for t in times}
            print(f"\n{benchmark}, {workers} worker{'s' if workers > 1 else ''}: mean regret at each budget "
                  f"({aggregate.clock_label(benchmark)}; lowest in bold)\n")
            print("| run | trials | " + " | ".join(f"{t:g}" for t in times) + " |")
            print("|---|---:|" + "---:|" * len(times))
            for label in labels:
                cells = [(f"**{means[t][label]:.4f}**" if means[t][label] == min(means[t].values())
                          else f"{means[t][label]:.4f}") if np.isfinite(means[t][label]) else "–" for t in times]
                print(f"| {label} | {len(runs[label])} | " + " | ".join(cells) + " |")
            focus = next((label for label in labels if split_label(label)[0] == args.focus), None)
            if focus is None:
                continue
            print()
            for t in times:
                others = [label for label in labels if label != focus and np.isfinite(means[t][label])]
                if not others or not np.isfinite(means[t][focus]):
                    continue
                raw = [mann_whitney(finals[t][focus], finals[t][o]) for o in others]
                adjusted = dict(zip(others, holm(raw)))
                runner = min(others, key=lambda o: means[t][o])
                lowest = means[t][focus] < means[t][runner]
                tied = f"{means[t][focus]:.4f}" == f"{means[t][runner]:.4f}"     # equal as printed
                if tied:
                    print(f"- {t:g}: {focus} tied with {runner} ({means[t][focus]:.4f} each), Holm p = "
                          f"{adjusted[runner]:.2g}")
                    continue
                verdict, other = ("lowest", "runner-up") if lowest else ("not lowest", "lowest")
                print(f"- {t:g}: {focus} {verdict} ({means[t][focus]:.4f}); {other} {runner} "
                      f"({means[t][runner]:.4f}), Holm p = {adjusted[runner]:.2g}")
                if args.every:
                    print("  - Holm p against each: " + ", ".join(f"{o} ({means[t][o]:.4f}) {adjusted[o]:.2g}"
                                                            for o in others))


if __name__ == "__main__":
    main()
