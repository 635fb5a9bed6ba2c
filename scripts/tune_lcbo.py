"""Tune lcbo on seeds disjoint from the evaluation seeds: each variant (a set of --set overrides) runs
`--trials` trials from seed `--seed` (default 1000..1019) at `--hours` simulated hours (default 300) on
`--benchmark`, in this process; prints mean final regret, the share of trials ending on the best
architecture, and CPU seconds per trial. Evaluation seeds (0-29) are never used here.

    python scripts/tune_lcbo.py "" "beta=0" "keep=0.333,0.1,0.333" --trials 20 --hours 300
    python scripts/tune_lcbo.py "" "head_start=2;head_start_rung=-2" --trials 30 --hours 1000 --at 3,10,30,100,300

`--at`: also the mean regret of the same trials cut at these earlier hours (trials without an
incumbent yet left out of the mean, counted in brackets); `--workers K` simulated workers;
`--algo mo-lcbo --objectives logppl,params` tunes the multi-objective version (regret: HV regret);
`--data-dir H` runs on a custom data folder (e.g. a held-out table from scripts/heldout_folders.py).

`--against ALGO`: also runs ALGO (its defaults, or settings as `ALGO:KEY=VALUE;...`) on the same seeds and
prints, at each hour, the two-sided Mann-Whitney p of the variant against it; with 60 trials or more, also
the p of each block of 30 seeds (how often 30 trials would show the difference):

    python scripts/tune_lcbo.py "" --workers 4 --trials 120 --hours 40 --at 3,10,30 --against asha
"""
import argparse
import time

import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np


def parse_overrides(text: str) -> dict:
    """'KEY=VALUE;KEY=VALUE' -> {KEY: VALUE} ('' -> {}: the defaults)."""
    return dict(item.split("=", 1) for item in text.split(";") if item.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="space-separated KEY=VALUE;KEY=VALUE override sets ('' = defaults)")
    parser.add_argument("--algo", default="lcbo")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--hours", type=float, default=300.0)
    parser.add_argument("--benchmark", default="ptb")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--at", default="", help="comma list of earlier hours to report too")
    parser.add_argument("--objectives", default="", help="comma list, for a multi-objective --algo")
    parser.add_argument("--data-dir", default=None, help="a data folder with the benchmark's layout")
    parser.add_argument("--against", default=None,
                        help="an algorithm to test each variant against (Mann-Whitney); ALGO:KEY=VALUE;... sets its settings")
    args = parser.parse_args()
    if args.seed < 1000:
        parser.error("tuning seeds must be >= 1000 (0-29 are the evaluation seeds)")
    import nasbench

    bench = nasbench.load_benchmark(args.benchmark, data_dir=args.data_dir)
    at_hours = [float(h) for h in args.at.split(",")] if args.at else []
    objectives = tuple(name for name in args.objectives.split(",") if name)

    def regrets_at(records):
        """[trials, len(at_hours) + 1] regret at each --at hour and at the end (NaN: no incumbent yet)."""
        from nasbench_cli.results.truncate import record_at

        cut = [[record_at(r, h * 3600.0)["final_regret"] for h in at_hours] + [r["final_regret"]] for r in records]
        return np.array([[np.nan if v is None else v for v in row] for row in cut], dtype=float)

    reference = None
    if args.against:
        name, _, settings = args.against.partition(":")
        reference = regrets_at(nasbench.run(nasbench.make_algorithm(name, **parse_overrides(settings)), bench,
                                            trials=args.trials, budget_hours=args.hours, seed=args.seed,
                                            workers=args.workers, objectives=objectives))
        print(f"{args.against} (reference): " + ", ".join(
            f"{h:g} h {np.nanmean(reference[:, i]):.4f}" for i, h in enumerate(at_hours + [args.hours])), flush=True)
    for variant in args.variants:
        overrides = parse_overrides(variant)
        start = time.process_time()
        records = nasbench.run(nasbench.make_algorithm(args.algo, **overrides), bench, trials=args.trials,
                               budget_hours=args.hours, seed=args.seed, workers=args.workers,
                               objectives=objectives)
        cpu = (time.process_time() - start) / args.trials
        regrets = np.array([r["final_regret"] for r in records], dtype=float)
        best = np.mean([r["trajectory"]["incumbent"][-1] == bench.best_id if r["trajectory"]["incumbent"] else False
                        for r in records])
        print(f"{args.algo} [{variant or 'defaults'}] {args.data_dir or args.benchmark} {args.hours:g} h, seeds {args.seed}.."
              f"{args.seed + args.trials - 1}: mean regret {np.nanmean(regrets):.4f} (median "
              f"{np.nanmedian(regrets):.4f}){'' if args.objectives else f', best arch {best:.0%}'}, "
              f"CPU {cpu:.2f} s/trial", flush=True)
        cut = regrets_at(records)
        if at_hours:
            print("    at " + ", ".join(f"{h:g} h {np.nanmean(cut[:, i]):.4f} ({int(np.isnan(cut[:, i]).sum())})"
                                     for i, h in enumerate(at_hours)), flush=True)
        if reference is not None:
            print(f"    against {args.against}: " + "; ".join(
                f"{h:g} h {p_values(cut[:, i], reference[:, i])}"
                for i, h in enumerate(at_hours + [args.hours])), flush=True)


def p_values(x: np.ndarray, y: np.ndarray, block: int = 30) -> str:
    """Two-sided Mann-Whitney p of x against y (same seeds; NaN left out), and of each block of 30 seeds."""
    from nasbench_cli.results.report_table import mann_whitney

    def p(a, b):
        return mann_whitney(a[~np.isnan(a)], b[~np.isnan(b)])

    text = f"p {p(x, y):.2g}"
    if len(x) >= 2 * block:
        text += " (blocks of 30: " + ", ".join(f"{p(x[k:k + block], y[k:k + block]):.2g}"
                                               for k in range(0, len(x) - block + 1, block)) + ")"
    return text

if __name__ == "__main__":
    main()
