"""Compute seconds per trial of bo10d, bo50d, tpe and smac next to plain reference implementations.

Each algorithm runs `--trials` trials (seeds `--seed` + k) at `--budget-hours` on PTB, timed in CPU
seconds (`time.process_time`, all threads) and wall seconds, and the same trials of its reference:

- bo10d / bo50d: the NAS-Bench-NLP release's loop (benchmarking_examples.ipynb): sklearn
  `BaggingRegressor(XGBRegressor(n_estimators=100, max_depth=15), n_estimators=14, max_samples=0.5)`
  refit every 10 evaluations after 20 random ones, `regr.predict(X)` plus every bag's `predict(X)`
  again over all architectures, `scores[selected] = inf; argmin`. XGBoost keeps its defaults
  (tree_method "hist" in xgboost >= 2) except its thread count, `--ref-xgb-threads` (default 1, so
  that the ratio measures the algorithmic savings and not thread oversubscription on a shared
  machine; 0 = xgboost's default, all cores). Its trajectories differ from ours (other random
  draws, tie order), so compare the regret distributions, not single trials.
- tpe: hyperopt's own `fmin` (`engine=hyperopt`): the same proposals bit for bit, so the same regret.
- smac: the same settings through SMAC's facade as shipped: its random forest on all cores
  (n_jobs=-1) and the run history written to disk after every `tell`, local-search start points in
  hash order. The same algorithm; trajectories may differ only through that order.

    nice python scripts/bench_model_optimizers.py [--algos bo10d,bo50d,tpe,smac] [--trials 2]
        [--budget-hours 1000] [--seed 0] [--ref-trials N] [--ref-xgb-threads 1] [--json]
"""
import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.core.environment import BudgetExhausted, Environment  # noqa: E402
from benchmarks.core.features import features as load_features  # noqa: E402
from benchmarks.core.regret import final_regret, trajectory  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402
from nasbench_cli.harness.simulator import run_on  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402

ALGOS = ("bo10d", "bo50d", "tpe", "smac")


def reference_bo(env, X, seed, xgb_threads):
    """The release's BO loop (bagged XGBoost, LCB, refit every 10) on our environment."""
    from sklearn.ensemble import BaggingRegressor
    from xgboost import XGBRegressor

    rng = np.random.RandomState(seed)
    n = env.search.n
    selected, X_train, y_train = [], [], []

    def evaluate(ind):
        obs = env.train(int(ind), 50)
        selected.append(int(ind))
        if obs.status == "OK":
            X_train.append(X[ind])
            y_train.append(obs.last_val_loss)

    for _ in range(20):
        evaluate(rng.choice(np.setdiff1d(np.arange(n), np.array(selected, dtype=int)), 1, replace=False)[0])
    regr = BaggingRegressor(XGBRegressor(n_estimators=100, max_depth=15, n_jobs=xgb_threads or None),
                            n_estimators=14, max_samples=0.5, n_jobs=1, random_state=seed)
    i = 20
    while True:
        if i % 10 == 0:
            regr.fit(np.array(X_train), np.array(y_train))
            y_pred_mean = regr.predict(X)
            y_pred_std = np.std([e.predict(X) for e in regr.estimators_], axis=0)
            scores = y_pred_mean - 2.0 * y_pred_std
        scores[np.array(selected)] = np.inf
        evaluate(np.argmin(scores))
        i += 1


def reference_smac(env, X, seed, settings):
    """Our SMAC loop with the facade's stock model (all cores) and a run-history save per tell."""
    from ConfigSpace import ConfigurationSpace
    from smac import HyperparameterOptimizationFacade as Facade, Scenario
    from smac.runhistory.dataclasses import TrialValue

    from optimizers.model_based.smac_search import _not_called, labels
    from optimizers.libraries.snapped_evaluation import quiet_logger
    from optimizers.snapping import nearest_by_cosine

    names = labels(X.shape[1])
    low, high = X.min(axis=0), X.max(axis=0)
    space = ConfigurationSpace({k: (float(a), float(b)) for k, a, b in zip(names, low, high)}, seed=seed)
    trained = np.zeros(env.search.n, dtype=bool)
    cost_of = {}
    with tempfile.TemporaryDirectory() as folder, quiet_logger("smac"):
        scenario = Scenario(space, output_directory=Path(folder) / "smac", deterministic=True,
                            n_trials=settings.n_trials, seed=seed)
        smac = Facade(scenario, _not_called, overwrite=True, logging_level=False,
                      initial_design=Facade.get_initial_design(
                          scenario, n_configs_per_hyperparameter=settings.initial_per_dim),
                      config_selector=Facade.get_config_selector(scenario, retrain_after=settings.retrain_after))
        while True:
            info = smac.ask()
            vector = np.array([info.config[k] for k in names])
            row = nearest_by_cosine(X, vector, exclude=trained if settings.new_only else None)
            if row not in cost_of:
                obs = env.train(row, 50)
                ok = obs.status == "OK" and math.isfinite(obs.last_val_loss)
                cost_of[row] = obs.last_val_loss if ok else settings.penalty
                trained[row] = True
            smac.tell(info, TrialValue(cost=cost_of[row]))


def timed(benchmark, budget_s, body):
    env = Environment(benchmark.search, budget_s)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        body(env)
    except BudgetExhausted:
        pass
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu_s": cpu, "wall_s": wall, "evaluations": len(env.history.arch),
            "final_regret": final_regret(trajectory(benchmark, env.history))}


def bench(benchmark, name, seed, budget_s, with_reference, xgb_threads, timers):
    algorithm = make_algorithm(name)
    X = np.asarray(load_features(benchmark, algorithm.feature_kind))
    ours = timed(benchmark, budget_s, lambda env: run_on(env, algorithm, seed, X))
    ours.update({k: round(v, 3) for k, v in timers.items()})
    for key in timers:
        timers[key] = 0.0
    if not with_reference:
        return ours, None
    if name.startswith("bo"):
        ref = timed(benchmark, budget_s, lambda env: reference_bo(env, X, seed, xgb_threads))
    elif name == "tpe":
        slow = make_algorithm("tpe", {"engine": "hyperopt"})
        ref = timed(benchmark, budget_s, lambda env: run_on(env, slow, seed, X))
    else:
        ref = timed(benchmark, budget_s, lambda env: reference_smac(env, X, seed, algorithm.settings))
    return ours, ref


def instrument_bo(timers):
    """Time BO's surrogate fit and predict (CPU seconds) without changing what it computes."""
    import optimizers.model_based.bayesian as bayesian

    for key, attribute in (("fit_s", "fit_bags"), ("predict_s", "predict_bags")):
        original = getattr(bayesian, attribute)

        def wrapper(*args, _original=original, _key=key):
            started = time.process_time()
            try:
                return _original(*args)
            finally:
                timers[_key] += time.process_time() - started

        setattr(bayesian, attribute, wrapper)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", default=",".join(ALGOS))
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--ref-trials", type=int, default=None, help="trials with a reference (default: --trials)")
    parser.add_argument("--budget-hours", type=float, default=1000.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ref-xgb-threads", type=int, default=1, help="BO reference xgboost threads; 0 = all cores")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    benchmark = load_benchmark("ptb")
    budget_s = args.budget_hours * 3600.0
    ref_trials = args.trials if args.ref_trials is None else args.ref_trials
    timers = {"fit_s": 0.0, "predict_s": 0.0}
    instrument_bo(timers)
    rows = []
    for name in [a.strip() for a in args.algos.split(",") if a.strip()]:
        for k in range(args.trials):
            seed = args.seed + k
            ours, ref = bench(benchmark, name, seed, budget_s, k < ref_trials, args.ref_xgb_threads, timers)
            if not name.startswith("bo"):
                ours = {key: v for key, v in ours.items() if key not in timers}
            rows.append({"algo": name, "seed": seed, "ours": ours, "reference": ref})
            if not args.json:
                line = (f"{name:6s} seed {seed}: ours {ours['cpu_s']:7.1f} s cpu {ours['wall_s']:7.1f} s wall "
                        f"{ours['evaluations']:4d} evals regret {ours['final_regret']:.4f}")
                if "fit_s" in ours:
                    line += f" (fit {ours['fit_s']:.1f} s, predict {ours['predict_s']:.1f} s)"
                if ref is not None:
                    line += (f" | reference {ref['cpu_s']:7.1f} s cpu {ref['wall_s']:7.1f} s wall "
                             f"{ref['evaluations']:4d} evals regret {ref['final_regret']:.4f} | "
                             f"ratio {ref['cpu_s'] / ours['cpu_s']:.1f}x cpu {ref['wall_s'] / ours['wall_s']:.1f}x wall")
                print(line, flush=True)
    summary = {}
    for name in dict.fromkeys(r["algo"] for r in rows):
        mine = [r for r in rows if r["algo"] == name]
        paired = [r for r in mine if r["reference"] is not None]
        summary[name] = {
            "ours_cpu_s_per_trial": float(np.mean([r["ours"]["cpu_s"] for r in mine])),
            "ours_mean_regret": float(np.mean([r["ours"]["final_regret"] for r in mine])),
        }
        if paired:
            summary[name].update({
                "reference_cpu_s_per_trial": float(np.mean([r["reference"]["cpu_s"] for r in paired])),
                "reference_mean_regret": float(np.mean([r["reference"]["final_regret"] for r in paired])),
                "cpu_ratio": float(sum(r["reference"]["cpu_s"] for r in paired)
                                   / sum(r["ours"]["cpu_s"] for r in paired)),
            })
            if len(paired) >= 3:   # do the two give the same final-regret distribution?
                from scipy.stats import mannwhitneyu

                summary[name]["regret_mannwhitney_p"] = float(mannwhitneyu(
                    [r["ours"]["final_regret"] for r in mine], [r["reference"]["final_regret"] for r in paired],
                    alternative="two-sided").pvalue)
    if args.json:
        print(json.dumps({"budget_hours": args.budget_hours, "trials": rows, "summary": summary}, indent=2))
    else:
        for name, s in summary.items():
            line = f"{name:6s} ours {s['ours_cpu_s_per_trial']:.1f} s/trial, mean regret {s['ours_mean_regret']:.4f}"
            if "cpu_ratio" in s:
                line += (f"; reference {s['reference_cpu_s_per_trial']:.1f} s/trial, mean regret "
                         f"{s['reference_mean_regret']:.4f}; ratio {s['cpu_ratio']:.1f}x")
            if "regret_mannwhitney_p" in s:
                line += f"; final regrets differ? two-sided Mann-Whitney p = {s['regret_mannwhitney_p']:.2f}"
            print(line)


if __name__ == "__main__":
    main()
