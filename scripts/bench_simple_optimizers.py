"""Compute seconds per trial of rs50e, rs10e, hb and re next to reference implementations.

The references follow the NAS-Bench-NLP release (`nas_environment.py` and `benchmarking_examples.ipynb`):
an environment that keeps a dict of training states, looks architectures up by `json.dumps(recipe)`,
sums every training state to get the elapsed time, and scans every log for the incumbent's test loss;
random search re-draws from `np.setdiff1d(all, selected)` each step, evolution snaps with
`scipy.spatial.distance.cdist(..., "cosine")`. They use the same epoch semantics as
`benchmarks.core.environment` (training to E epochs charges epochs 1..E and reveals epoch E) and stop at
the same simulated budget, so both sides do the same amount of search; the release's own notebook
ran a fixed number of steps instead.

Ours is timed as the harness runs it: the one-worker simulator (`nasbench_cli.harness.simulator.run_on`) on an
`Environment`, then the regret trajectory (`benchmarks.core.regret.trajectory`). "env share" is the time
spent inside the environment (`Environment.continuation` and `.record`, what one train call does)
divided by the time of the simulated trial, measured on a second, instrumented run of the same trial
(a timer around each call), so the timed run itself carries no instrumentation.

    nice python scripts/bench_simple_optimizers.py [--trials 3] [--budget-hours 1000] [--json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.core.environment import Environment  # noqa: E402
from benchmarks.core.regret import trajectory  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402
from nasbench_cli.harness.simulator import run_on  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402

ALGOS = ("rs50e", "rs10e", "hb", "re")


class ReferenceEnvironment:
    """The release's `nas_environment.Environment`, fed from the loaded benchmark."""

    def __init__(self, benchmark):
        search = benchmark.search
        self._logs = []
        self._arch_to_id = {}
        for i in range(search.n):
            e = int(search.n_epochs[i])
            self._logs.append({
                "recepie": search.recipes[i],
                "train_losses": search.train_loss[i, :e].tolist(),
                "val_losses": search.val_loss[i, :e].tolist(),
                "test_losses": benchmark.test_loss[i, :e].tolist(),
                "wall_times": search.wall_time_s[i, :e].tolist(),
                "status": str(search.status[i]),
            })
            self._arch_to_id[search.recipes[i]] = i
        self._training_states = {}

    def get_total_time(self):
        return sum([x["wall_time"] for x in self._training_states.values()])

    def get_precomputed_recepies(self):
        return [json.loads(x["recepie"]) for x in self._logs]

    def get_test_loss_of_the_best_validated_architecture(self):
        return self._logs[self.best_arch_id]["test_losses"][self.best_arch_epoch]

    def reset(self):
        self.best_arch_id = -1
        self.best_arch_epoch = -1
        self._training_states = {}

    def _make_state_dict(self, arch_id, epoch, requested):
        log = self._logs[arch_id]
        state = {f"{phase}_loss": log[f"{phase}_losses"][epoch - 1] if epoch >= 1 else np.nan
                 for phase in ["train", "val", "test"]}
        state["wall_time"] = np.sum(log["wall_times"][:epoch])
        state["cur_epoch"] = epoch
        logged = len(log["train_losses"])
        state["status"] = "OK" if requested <= logged and (epoch < logged or log["status"] == "OK") \
            else (log["status"] if log["status"] != "OK" else "stopped early")
        return state

    def simulated_train(self, arch, max_epoch):
        arch_id = self._arch_to_id[json.dumps(arch)]
        if (arch_id not in self._training_states) or (max_epoch > self._training_states[arch_id]["cur_epoch"]):
            reached = min([max_epoch, len(self._logs[arch_id]["train_losses"])])
            self._training_states[arch_id] = self._make_state_dict(arch_id, reached, max_epoch)
            val_losses = self._logs[arch_id]["val_losses"][:reached]
            if np.sum(~np.isnan(val_losses)) > 0:
                cur_best_epoch = np.nanargmin(val_losses)
                best_logged = self._logs[self.best_arch_id]["val_losses"]
                if (self.best_arch_id == -1) or (best_logged[self.best_arch_epoch] > val_losses[cur_best_epoch]):
                    self.best_arch_id = arch_id
                    self.best_arch_epoch = cur_best_epoch

    def get_model_status(self, arch):
        return self._training_states[self._arch_to_id[json.dumps(arch)]]["status"]

    def get_model_stats(self, arch, epoch):
        arch_id = self._arch_to_id[json.dumps(arch)]
        return self._make_state_dict(arch_id, epoch, epoch)


def reference_random_search(env, search_set, seed, budget_s, train_epochs):
    np.random.seed(seed)
    env.reset()
    selected_inds, test_losses, wall_times = [], [], []
    while True:
        cur_ind = np.random.choice(np.setdiff1d(np.arange(len(search_set)), np.array(selected_inds)), 1,
                                   replace=False)[0]
        env.simulated_train(search_set[cur_ind], train_epochs)
        if env.get_total_time() > budget_s:
            return len(selected_inds)
        selected_inds.append(cur_ind)
        test_losses.append(env.get_test_loss_of_the_best_validated_architecture())
        wall_times.append(env.get_total_time())


def reference_hyperband(env, search_set, seed, budget_s, R=50, eta=3):
    env.reset()
    np.random.seed(seed)
    s_max = int(np.floor(np.log(R) / np.log(eta)))
    B = (s_max + 1) * R
    test_losses, wall_times, calls = [], [], 0
    while True:
        for s in range(s_max, -1, -1):
            n = int(np.ceil(float(B) / R * float(eta) ** s / (s + 1)))
            r = R * float(eta) ** (-s)
            T = np.random.choice(len(search_set), n, replace=False)
            for i in range(s + 1):
                n_i = int(np.floor(n * float(eta) ** (-i)))
                r_i = int(np.floor(r * eta ** i))
                L = []
                for t in T:
                    env.simulated_train(search_set[t], r_i)
                    if env.get_total_time() > budget_s:
                        return calls
                    calls += 1
                    if env.get_model_status(search_set[t]) == "OK":
                        L.append(env.get_model_stats(search_set[t], r_i)["val_loss"])
                    else:
                        L.append(np.inf)
                    if calls % 25 == 0:
                        test_losses.append(env.get_test_loss_of_the_best_validated_architecture())
                        wall_times.append(env.get_total_time())
                test_losses.append(env.get_test_loss_of_the_best_validated_architecture())
                wall_times.append(env.get_total_time())
                L = np.array(L)
                halved_inds = np.argsort(L)[:int(np.floor(n_i / float(eta)))]
                halved_inds = halved_inds[L[halved_inds] < np.inf]
                T = T[halved_inds]


def reference_evolution(env, search_set, X, seed, budget_s, train_epochs=50, P=20, S=10):
    from scipy.spatial import distance

    def mutate_embedded(e, std, axes_bounds):
        return np.clip(e + np.random.randn(len(e)) * std, axes_bounds[0], axes_bounds[1])

    def find_closest(E, e):
        return np.argmin(distance.cdist([e], E, "cosine")[0])

    axes_bounds = (np.min(X, axis=0), np.max(X, axis=0))
    np.random.seed(seed)
    env.reset()
    test_losses, wall_times, population, history = [], [], [], []
    for i in np.random.choice(np.arange(len(search_set)), P, replace=False):
        env.simulated_train(search_set[i], train_epochs)
        if env.get_total_time() > budget_s:
            return len(history)
        population.append(i)
        history.append(i)
        test_losses.append(env.get_test_loss_of_the_best_validated_architecture())
        wall_times.append(env.get_total_time())
    attempt = 0
    while True:
        sample = np.random.choice(population, S, replace=False)
        ok = [i for i in sample if env.get_model_status(search_set[i]) == "OK"]
        if not ok:
            attempt += 1
            if attempt > 5:
                return len(history)
            continue
        attempt = 0
        sample_scores = [env.get_model_stats(search_set[i], train_epochs)["val_loss"] for i in ok]
        parent = ok[int(np.argmin(sample_scores))]
        for std in [0.5, 1.0, 2.0, 4.0, 8.0]:
            child = find_closest(X, mutate_embedded(X[parent], std, axes_bounds))
            if child != parent:
                break
        env.simulated_train(search_set[child], train_epochs)
        if env.get_total_time() > budget_s:
            return len(history)
        history.append(child)
        population = population[1:] + [child]
        test_losses.append(env.get_test_loss_of_the_best_validated_architecture())
        wall_times.append(env.get_total_time())


def env_time(benchmark, name, seed, budget_s, feats):
    """(seconds inside the environment, seconds of the simulated trial) of a second, instrumented run."""
    env = Environment(benchmark.search, budget_s)
    clock, spent = time.perf_counter, [0.0]

    def timed(method):
        def call(*args):
            start = clock()
            try:
                return method(*args)
            finally:
                spent[0] += clock() - start
        return call

    env.continuation, env.record = timed(env.continuation), timed(env.record)
    start = clock()
    run_on(env, make_algorithm(name), seed, feats)
    return spent[0], clock() - start


def time_ours(benchmark, name, seed, budget_s, features):
    algorithm = make_algorithm(name)
    env = Environment(benchmark.search, budget_s)
    feats = features if algorithm.feature_kind else None
    start = time.perf_counter()
    run_on(env, algorithm, seed, feats)
    run_s = time.perf_counter() - start
    start = time.perf_counter()
    trajectory(benchmark, env.history)
    regret_s = time.perf_counter() - start
    env_s, total_s = env_time(benchmark, name, seed, budget_s, feats)
    return {"run_s": run_s, "regret_s": regret_s, "env_s": env_s, "env_share": env_s / total_s,
            "calls": len(env.history.arch), "archs": len(set(env.history.arch))}


def time_reference(ref_env, search_set, features, name, seed, budget_s):
    start = time.perf_counter()
    if name in ("rs50e", "rs10e"):
        archs = reference_random_search(ref_env, search_set, seed, budget_s, 50 if name == "rs50e" else 10)
    elif name == "hb":
        archs = reference_hyperband(ref_env, search_set, seed, budget_s)
    else:
        archs = reference_evolution(ref_env, search_set, features, seed, budget_s)
    return {"run_s": time.perf_counter() - start, "count": archs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--budget-hours", type=float, default=1000.0)
    parser.add_argument("--algos", default=",".join(ALGOS))
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    budget_s = args.budget_hours * 3600.0
    benchmark = load_benchmark("ptb")
    features = benchmark.search.shipped_features
    ref_env = ReferenceEnvironment(benchmark)
    search_set = ref_env.get_precomputed_recepies()
    results = {}
    for name in args.algos.split(","):
        time_ours(benchmark, name, 10_000, budget_s, features)                 # warm caches
        ours = [time_ours(benchmark, name, seed, budget_s, features) for seed in range(args.trials)]
        refs = [time_reference(ref_env, search_set, features, name, seed, budget_s) for seed in range(args.trials)]
        mean = lambda rows, key: float(np.mean([r[key] for r in rows]))  # noqa: E731
        results[name] = {
            "ours_run_s": mean(ours, "run_s"), "ours_regret_s": mean(ours, "regret_s"),
            "ours_env_s": mean(ours, "env_s"), "ours_calls": mean(ours, "calls"),
            "ours_archs": mean(ours, "archs"), "ref_run_s": mean(refs, "run_s"),
            "ref_archs_or_calls": mean(refs, "count"),
            "env_share": mean(ours, "env_share"),
        }
        row = results[name]
        row["speedup"] = row["ref_run_s"] / (row["ours_run_s"] + row["ours_regret_s"])
    if args.json:
        print(json.dumps({"budget_s": budget_s, "trials": args.trials, "results": results}, indent=2))
        return 0
    print(f"seconds per trial, {args.trials} trials each, budget {args.budget_hours:g} h, PTB")
    print(f"{'algo':6} {'ours run':>9} {'+regret':>8} {'reference':>10} {'speedup':>8} {'env share':>10} "
          f"{'calls':>6} {'archs':>6} {'ref n':>6}")
    for name, r in results.items():
        print(f"{name:6} {r['ours_run_s']:9.4f} {r['ours_regret_s']:8.4f} {r['ref_run_s']:10.3f} "
              f"{r['speedup']:7.1f}x {100 * r['env_share']:9.1f}% {r['ours_calls']:6.0f} {r['ours_archs']:6.0f} "
              f"{r['ref_archs_or_calls']:6.0f}")
    print("env share = time inside Environment.train / time of algorithm.run (instrumented rerun); "
          "ref n = train steps of the reference (re: children that repeat an architecture included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
