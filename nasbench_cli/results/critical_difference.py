"""Mean ranks across benchmarks with the Friedman test and Nemenyi's critical difference (Demšar 2006).

Blocks: every (benchmark, trial index) that all compared algorithms ran. Within a block the
algorithms are ranked by final regret (1 = lowest; ties share the average rank; a trial without an
incumbent ranks last), so benchmarks whose regrets have different units (log-perplexity, GLUE points,
perplexity) can be compared. Two algorithms differ significantly when their mean ranks differ by more
than CD = q_alpha * sqrt(k (k + 1) / (6 N)), with k algorithms, N blocks and q_alpha the studentized
range quantile divided by sqrt(2), as in Demšar (2006) and autorank.
"""
import math

import numpy as np

from benchmarks.core.errors import UserError
from nasbench_cli.results import aggregate


def common_labels(runs: dict) -> list:
    """Labels present on every benchmark of `runs` ({benchmark: {label: records}}), first benchmark's order."""
    benchmarks = list(runs)
    return [label for label in runs[benchmarks[0]] if all(label in runs[b] for b in benchmarks[1:])]


def rank_blocks(runs: dict, labels: list) -> tuple[np.ndarray, list]:
    """(ranks [N, k], block names 'benchmark#trial'): one row per (benchmark, trial index) all labels ran."""
    from scipy.stats import rankdata

    rows, names = [], []
    for benchmark, per_label in runs.items():
        by_trial = [{r["trial"]: r for r in per_label[label]} for label in labels]
        for trial in sorted(set.intersection(*(set(t) for t in by_trial))):
            finals = aggregate.final_regrets([t[trial] for t in by_trial])
            finals = np.where(np.isfinite(finals), finals, np.inf)      # no incumbent: last
            rows.append(rankdata(finals))
            names.append(f"{benchmark}#{trial}")
    return np.array(rows, dtype=float).reshape(len(rows), len(labels)), names


def critical_difference(runs: dict, alpha: float = 0.05) -> dict:
    """Mean ranks, the Friedman test and Nemenyi's CD over the labels every benchmark has.

    UserError when fewer than two benchmarks, fewer than three common algorithms or no common trial."""
    from scipy.stats import friedmanchisquare, studentized_range

    if len(runs) < 2:
        raise UserError("a critical-difference diagram compares algorithms across benchmarks: give results of "
                        "at least two benchmarks (e.g. `nasbench plot results-ptb results-wt2`)")
    labels = common_labels(runs)
    if len(labels) < 3:
        raise UserError(f"a critical-difference diagram needs at least three algorithms run on every benchmark "
                        f"({', '.join(runs)}); common to all: {', '.join(labels) or 'none'}")
    ranks, blocks = rank_blocks(runs, labels)
    if len(blocks) < 2:
        raise UserError("the algorithms share fewer than two trial indices across the benchmarks; run the same "
                        "--trials for each")
    k, n = len(labels), len(blocks)
    statistic, p_value = friedmanchisquare(*ranks.T)
    q_alpha = float(studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    cd = q_alpha * math.sqrt(k * (k + 1) / (6.0 * n))
    mean = ranks.mean(axis=0)
    per_benchmark = {b: {label: float(np.mean([r[j] for r, name in zip(ranks, blocks) if name.startswith(b + "#")]))
                         for j, label in enumerate(labels)} for b in runs}
    return {"labels": labels, "mean_rank": {label: float(m) for label, m in zip(labels, mean)},
            "per_benchmark": per_benchmark, "blocks": n, "benchmarks": list(runs), "alpha": alpha,
            "friedman_statistic": float(statistic), "friedman_p": float(p_value), "cd": cd,
            "cliques": cliques(mean, cd, labels)}


def cliques(mean_rank, cd: float, labels: list) -> list:
    """Maximal groups of labels (in rank order) whose mean ranks lie within `cd` of each other: the bars
    of the diagram, each a set of algorithms not significantly different."""
    order = np.argsort(mean_rank, kind="stable")
    groups = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and mean_rank[order[end + 1]] - mean_rank[order[start]] <= cd:
            end += 1
        if end > start and not any(g[0] <= start and end <= g[1] for g in groups):
            groups.append((start, end))
    return [[labels[order[i]] for i in range(a, b + 1)] for a, b in groups]
