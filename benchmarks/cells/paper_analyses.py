"""The NAS-Bench-NLP paper's analyses of its own data (Klyuchnikov et al., 2020): Table 2 and Figures 4-6.

Perplexity is exp(log-perplexity). "Best test perplexity" of an architecture is its lowest test perplexity
over the recorded epochs, as the paper's Table 2 reports it (LSTM 78.5, GRU 86.1, RNN 135.1); "final" is
the value at epoch 50. Architectures count only if they trained all 50 epochs with finite losses.
"""
import numpy as np

from benchmarks.cells.baseline_cells import baseline_id

BASELINES = ("lstm", "gru", "rnn")
PAPER_TABLE2 = {"lstm": 78.5, "gru": 86.1, "rnn": 135.1}   # test perplexity, the paper's Table 2
FIDELITY_EPOCHS = (1, 3, 5, 10, 25, 50)


def complete_rows(benchmark) -> np.ndarray:
    """Rows that trained all max_epochs epochs with finite train/val/test losses and wall times."""
    s = benchmark.search
    full = s.n_epochs == s.max_epochs
    finite = np.isfinite(s.val_loss).all(axis=1) & np.isfinite(benchmark.test_loss).all(axis=1) \
        & np.isfinite(s.wall_time_s).all(axis=1)
    return np.flatnonzero(full & finite)


def best_test_perplexity(benchmark) -> np.ndarray:
    """float64 [n]: exp(lowest test log-perplexity over the recorded epochs); NaN if none is finite."""
    with np.errstate(all="ignore"):
        test = np.where(np.isfinite(benchmark.test_loss), benchmark.test_loss, np.inf)
        best = np.exp(test.min(axis=1))
    return np.where(np.isfinite(best), best, np.nan)


def table2(benchmark, top: int = 10) -> dict:
    """The paper's Table 2: the hand-designed cells and the `top` generated cells by best test perplexity,
    with parameters; and how many generated cells beat the GRU and the LSTM."""
    s = benchmark.search
    best = best_test_perplexity(benchmark)
    baseline_rows = {name: s.index_of(baseline_id(name)) for name in BASELINES}
    generated = np.setdiff1d(complete_rows(benchmark), list(baseline_rows.values()))
    order = generated[np.argsort(best[generated], kind="stable")]

    def row(i):
        return {"id": int(s.ids[i]), "test_perplexity": float(best[i]), "num_params": int(s.num_params[i])}

    return {"benchmark": benchmark.name, "generated_cells": int(len(generated)),
            "baselines": {name: row(i) | {"paper_test_perplexity": PAPER_TABLE2[name]}
                          for name, i in baseline_rows.items()},
            "top_generated": [row(i) for i in order[:top]],
            "generated_beating": {name: int((best[generated] < best[i]).sum()) for name, i in baseline_rows.items()}}


def fidelity(benchmark, epochs=FIDELITY_EPOCHS) -> dict:
    """Figure 5: rank agreement between validation perplexity at each epoch in `epochs` and the final
    (epoch-50) test perplexity, over the complete rows: Kendall tau-b and Spearman rho."""
    from scipy.stats import kendalltau, spearmanr

    rows = complete_rows(benchmark)
    final_test = benchmark.test_loss[rows, benchmark.search.max_epochs - 1]
    result = {}
    for epoch in epochs:
        val = benchmark.search.val_loss[rows, epoch - 1]
        result[int(epoch)] = {"kendall_tau": float(kendalltau(val, final_test).statistic),
                              "spearman_rho": float(spearmanr(val, final_test).statistic)}
    return {"benchmark": benchmark.name, "architectures": int(len(rows)), "epochs": result}


def metrics(benchmark) -> dict:
    """Figure 4: parameters, total training wall time (seconds, 50 epochs) and best test perplexity of the
    complete rows, with their rank (Spearman) and linear (Pearson, on log-perplexity) correlations, and
    quantiles of the best test perplexity."""
    from scipy.stats import pearsonr, spearmanr

    rows = complete_rows(benchmark)
    values = {"num_params": benchmark.search.num_params[rows].astype(float),
              "wall_time_s": benchmark.search.wall_time_s[rows].sum(axis=1),
              "best_test_perplexity": best_test_perplexity(benchmark)[rows]}
    pairs = [("num_params", "best_test_perplexity"), ("wall_time_s", "best_test_perplexity"),
             ("num_params", "wall_time_s")]
    correlations = {f"{a} vs {b}": {"spearman_rho": float(spearmanr(values[a], values[b]).statistic),
                                    "pearson_r": float(pearsonr(np.log(values[a]), np.log(values[b])).statistic)}
                    for a, b in pairs}
    quantiles = {f"q{int(q * 100):02d}": float(np.quantile(values["best_test_perplexity"], q))
                 for q in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9)}
    return {"benchmark": benchmark.name, "architectures": int(len(rows)), "correlations": correlations,
            "best_test_perplexity_quantiles": quantiles, "values": values}


def transfer(ptb, wt2) -> dict:
    """Figure 6: best test log-perplexity on PTB against WikiText-2 for the architectures in both
    (matched by recepie id, complete on both), with Pearson r, Spearman rho and Kendall tau."""
    from scipy.stats import kendalltau, pearsonr, spearmanr

    ptb_rows, wt2_rows = complete_rows(ptb), complete_rows(wt2)
    common = np.intersect1d(ptb.search.ids[ptb_rows], wt2.search.ids[wt2_rows])
    x = np.log(best_test_perplexity(ptb)[ptb.search.indices_of(common)])
    y = np.log(best_test_perplexity(wt2)[wt2.search.indices_of(common)])
    return {"architectures": int(len(common)), "ids": common.tolist(),
            "ptb_test_logppl": x.tolist(), "wt2_test_logppl": y.tolist(),
            "pearson_r": float(pearsonr(x, y).statistic), "spearman_rho": float(spearmanr(x, y).statistic),
            "kendall_tau": float(kendalltau(x, y).statistic)}
