"""Tune lcbo on seeds disjoint from the evaluation seeds: each variant (a set of --set overrides) runs
`--trials` trials from seed `--seed` (default 1000..1019) at `--hours` simulated hours (default 300) on
`--benchmark`, in this process; prints mean final regret, the share of trials ending on the best
architecture, and CPU seconds per trial. Evaluation seeds (0-29) are never used here.

    python scripts/tune_lcbo.py "" "beta=0" "keep=0.333,0.1,0.333" --trials 20 --hours 300
    python scripts/tune_lcbo.py "" "head_start=2;head_start_rung=-2" --trials 30 --hours 1000 --at 3,10,30,100,300

`--at`: also the mean regret of the same trials cut at these earlier hours (trials without an
incumbent yet left out of the mean, counted in brackets); `--workers K` simulated workers;
`--algo mo-lcbo --objectives logppl,params` tunes the multi-objective version (regret: HV regret).
"""
import argparse
import time

import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np


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
    args = parser.parse_args()
    if args.seed < 1000:
        parser.error("tuning seeds must be >= 1000 (0-29 are the evaluation seeds)")
    import nasbench

    bench = nasbench.load_benchmark(args.benchmark)
    for variant in args.variants:
        overrides = dict(item.split("=", 1) for item in variant.split(";") if item.strip())
        start = time.process_time()
        records = nasbench.run(nasbench.make_algorithm(args.algo, **overrides), bench, trials=args.trials,
                               budget_hours=args.hours, seed=args.seed, workers=args.workers,
                               objectives=tuple(name for name in args.objectives.split(",") if name))
        cpu = (time.process_time() - start) / args.trials
        regrets = np.array([r["final_regret"] for r in records], dtype=float)
        best = np.mean([r["trajectory"]["incumbent"][-1] == bench.best_id if r["trajectory"]["incumbent"] else False
                        for r in records])
        print(f"{args.algo} [{variant or 'defaults'}] {args.benchmark} {args.hours:g} h, seeds {args.seed}.."
              f"{args.seed + args.trials - 1}: mean regret {np.nanmean(regrets):.4f} (median "
              f"{np.nanmedian(regrets):.4f}){'' if args.objectives else f', best arch {best:.0%}'}, "
              f"CPU {cpu:.2f} s/trial", flush=True)
        if args.at:
            from nasbench_cli.results.truncate import record_at

            cells = []
            for hours in (float(h) for h in args.at.split(",")):
                cut = np.array([record_at(r, hours * 3600.0)["final_regret"] for r in records], dtype=float)
                cells.append(f"{hours:g} h {np.nanmean(cut):.4f} ({int(np.isnan(cut).sum())})")
            print("    at " + ", ".join(cells), flush=True)


if __name__ == "__main__":
    main()
