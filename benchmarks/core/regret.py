"""Regret of a trial, computed on the harness side from an environment's history and test losses.

Regret at simulated time t is L(t) - L*: the test log-perplexity of the incumbent (the
best-by-validation architecture and epoch observed so far) minus the benchmark's lowest test
log-perplexity. It is None before the first finite validation loss is observed.
"""
from benchmarks.core.environment import History
from benchmarks.core.table import Benchmark


def trajectory(benchmark: Benchmark, history: History) -> dict:
    """Parallel lists, one entry per train call: time_s, regret, incumbent (recepie_id), incumbent_epoch,
    arch (recepie_id trained), epochs (epochs it reached)."""
    ids = benchmark.search.ids.tolist()
    test = benchmark.test_loss
    l_star = benchmark.l_star
    regrets, incumbents = [], []
    for row, epoch in zip(history.incumbent, history.incumbent_epoch):
        if row < 0:
            regrets.append(None)
            incumbents.append(None)
        else:
            regrets.append(float(test[row, epoch - 1]) - l_star)
            incumbents.append(ids[row])
    return {
        "time_s": list(history.time_s),
        "regret": regrets,
        "incumbent": incumbents,
        "incumbent_epoch": [e if e > 0 else None for e in history.incumbent_epoch],
        "arch": [ids[a] for a in history.arch],
        "epochs": list(history.epochs),
    }


def final_regret(trajectory_: dict) -> float | None:
    """The last regret of a trajectory (None if no incumbent was ever found)."""
    regrets = trajectory_["regret"]
    return regrets[-1] if regrets else None
