"""Transfer across language pairs on NMTHPO: the same configuration trained on several pairs. For every two
pairs, Kendall tau-b of dev BLEU and of decode time over the configurations both trained (the analysis the
NAS-Bench-NLP paper makes for PTB -> WikiText-2, per pair of tasks)."""
from itertools import combinations

import numpy as np

PAIR_METRICS = {"bleu": "dev BLEU", "decode_s": "decode time"}


def _by_config(benchmark, metric: str) -> dict:
    from benchmarks.core.objectives import architecture_values
    from benchmarks.core.space import architectures

    values = -benchmark.search.val_loss[:, 0] if metric == "bleu" else architecture_values(benchmark.search, metric)
    return {config.to_dict().__repr__(): float(v) for config, v in zip(architectures(benchmark.search), values)}


def transfer(benchmarks: list) -> dict:
    """{"pairs": [names], "metrics": {metric: {"tau": [[...]], "shared": [[...]]}}}: a symmetric matrix per
    metric, NaN on the diagonal and where two pairs share fewer than 3 configurations (so-en and sw-en
    share their own BPE sizes only with each other)."""
    from scipy.stats import kendalltau

    names = [b.name for b in benchmarks]
    out = {"pairs": names, "metrics": {}}
    for metric in PAIR_METRICS:
        tables = [_by_config(b, metric) for b in benchmarks]
        tau = np.full((len(names), len(names)), np.nan)
        shared = np.zeros((len(names), len(names)), dtype=int)
        for i, j in combinations(range(len(names)), 2):
            keys = sorted(set(tables[i]) & set(tables[j]))
            shared[i, j] = shared[j, i] = len(keys)
            if len(keys) >= 3:
                value = kendalltau([tables[i][k] for k in keys], [tables[j][k] for k in keys]).statistic
                tau[i, j] = tau[j, i] = value
        out["metrics"][metric] = {"tau": tau.tolist(), "shared": shared.tolist()}
    return out
