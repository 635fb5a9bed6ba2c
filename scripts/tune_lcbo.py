"""Tune lcbo on seeds disjoint from the evaluation seeds: each variant (a set of --set overrides) runs
`--trials` trials from seed `--seed` (default 1000..1019) at `--hours` simulated hours (default 300) on
`--benchmark`, in this process; prints mean final regret, the share of trials ending on the best
architecture, and CPU seconds per trial. Evaluation seeds (0-29) are never used here.

    python scripts/tune_lcbo.py "" "beta=0" "keep=0.333,0.1,0.333" --trials 20 --hours 300
"""
import argparse
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="space-separated KEY=VALUE;KEY=VALUE override sets ('' = defaults)")
    parser.add_argument("--algo", default="lcbo")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--hours", type=float, default=300.0)
    parser.add_argument("--benchmark", default="ptb")
    args = parser.parse_args()
    if args.seed < 1000:
        parser.error("tuning seeds must be >= 1000 (0-29 are the evaluation seeds)")
    import nasbench

    bench = nasbench.load_benchmark(args.benchmark)
    for variant in args.variants:
        overrides = dict(item.split("=", 1) for item in variant.split(";") if item.strip())
        start = time.process_time()
        records = nasbench.run(nasbench.make_algorithm(args.algo, **overrides), bench, trials=args.trials,
                               budget_hours=args.hours, seed=args.seed)
        cpu = (time.process_time() - start) / args.trials
        regrets = np.array([r["final_regret"] for r in records], dtype=float)
        best = np.mean([r["trajectory"]["incumbent"][-1] == bench.best_id if r["trajectory"]["incumbent"] else False
                        for r in records])
        print(f"{args.algo} [{variant or 'defaults'}] {args.benchmark} {args.hours:g} h, seeds {args.seed}.."
              f"{args.seed + args.trials - 1}: mean regret {np.nanmean(regrets):.4f} (median "
              f"{np.nanmedian(regrets):.4f}), best arch {best:.0%}, CPU {cpu:.2f} s/trial", flush=True)


if __name__ == "__main__":
    main()
