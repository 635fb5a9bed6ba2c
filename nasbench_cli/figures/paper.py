"""Figures of the paper's analyses (`nasbench analyze table2|metrics|fidelity|transfer`), as PNG and PDF."""
from pathlib import Path

import numpy as np

from nasbench_cli.figures.plotting import save_figure
from nasbench_cli.figures.style import _rc

BASELINE_STYLE = {"lstm": ("LSTM", "tab:red", "*"), "gru": ("GRU", "tab:green", "D"),
                  "rnn": ("RNN", "tab:purple", "s")}


def _mark_baselines(ax, benchmark, x_of, y_of) -> None:
    from benchmarks.cells.baseline_cells import baseline_id

    for name, (label, colour, marker) in BASELINE_STYLE.items():
        i = benchmark.search.index_of(baseline_id(name))
        ax.scatter([x_of(i)], [y_of(i)], s=90, c=colour, marker=marker, edgecolors="black", linewidths=0.6,
                   zorder=5, label=label)


def metrics_figure(benchmark, report: dict, out_dir: Path, formats) -> list[Path]:
    """Figure 4: parameters vs best test perplexity, wall time vs best test perplexity, and the
    distribution of best test perplexity (log axes), LSTM/GRU/RNN marked."""
    import matplotlib.pyplot as plt

    from benchmarks.cells.paper_analyses import best_test_perplexity

    values = report["values"]
    best_all = best_test_perplexity(benchmark)
    wall_all = benchmark.search.wall_time_s.sum(axis=1)
    with _rc():
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for ax, key, label, column in ((axes[0], "num_params", "parameters", benchmark.search.num_params),
                                       (axes[1], "wall_time_s", "training wall time, 50 epochs (h)", wall_all)):
            scale = 3600.0 if key == "wall_time_s" else 1.0
            ax.scatter(values[key] / scale, values["best_test_perplexity"], s=3, alpha=0.25, c="tab:blue",
                       rasterized=True, label="generated cells")
            _mark_baselines(ax, benchmark, lambda i, c=column, s=scale: c[i] / s, lambda i: best_all[i])
            rho = report["correlations"][f"{key} vs best_test_perplexity"]["spearman_rho"]
            ax.set(xlabel=label, ylabel="best test perplexity", yscale="log",
                   title=f"Spearman rho = {rho:.3f}")
            ax.legend(loc="upper right", markerscale=1.0)
        axes[2].hist(np.log10(values["best_test_perplexity"]), bins=80, color="tab:blue", alpha=0.8)
        for name, (label, colour, _) in BASELINE_STYLE.items():
            from benchmarks.cells.baseline_cells import baseline_id

            axes[2].axvline(np.log10(best_all[benchmark.search.index_of(baseline_id(name))]), color=colour,
                            label=label, linestyle="--")
        axes[2].set(xlabel="log10 best test perplexity", ylabel="architectures",
                    title=f"{report['architectures']:,} complete architectures")
        axes[2].legend()
        fig.suptitle(f"{benchmark.name}: parameters, training time and best test perplexity (paper Fig. 4)")
        written = save_figure(fig, Path(out_dir) / f"{benchmark.name}-metrics", formats)
        plt.close(fig)
    return written


def fidelity_figure(benchmark, report: dict, out_dir: Path, formats) -> list[Path]:
    """Figure 5: rank of validation perplexity at each epoch against rank of final test perplexity."""
    import matplotlib.pyplot as plt
    from scipy.stats import rankdata

    from benchmarks.cells.paper_analyses import complete_rows

    rows = complete_rows(benchmark)
    final_rank = rankdata(benchmark.test_loss[rows, benchmark.search.max_epochs - 1])
    epochs = list(report["epochs"])
    with _rc():
        fig, axes = plt.subplots(1, len(epochs), figsize=(2.6 * len(epochs), 2.9), sharey=True)
        for ax, epoch in zip(np.atleast_1d(axes), epochs):
            val_rank = rankdata(benchmark.search.val_loss[rows, int(epoch) - 1])
            ax.scatter(val_rank, final_rank, s=1, alpha=0.15, c="tab:blue", rasterized=True)
            tau = report["epochs"][epoch]["kendall_tau"]
            ax.set(title=f"epoch {epoch}: tau = {tau:.2f}", xlabel="rank of val. perplexity", aspect="equal")
        np.atleast_1d(axes)[0].set_ylabel("rank of final test perplexity")
        fig.suptitle(f"{benchmark.name}: early validation ranks against the final test rank "
                     f"({report['architectures']:,} architectures; paper Fig. 5)")
        written = save_figure(fig, Path(out_dir) / f"{benchmark.name}-fidelity", formats)
        plt.close(fig)
    return written


def transfer_figure(report: dict, out_dir: Path, formats) -> list[Path]:
    """Figure 6: best test log-perplexity on PTB against WikiText-2."""
    import matplotlib.pyplot as plt

    from benchmarks.cells.baseline_cells import baseline_id

    x, y = np.asarray(report["ptb_test_logppl"]), np.asarray(report["wt2_test_logppl"])
    with _rc():
        fig, ax = plt.subplots(figsize=(4.6, 4.2))
        ax.scatter(x, y, s=14, alpha=0.7, c="tab:blue", label="architectures on both")
        for name, (label, colour, marker) in BASELINE_STYLE.items():
            if baseline_id(name) in report["ids"]:
                k = report["ids"].index(baseline_id(name))
                ax.scatter([x[k]], [y[k]], s=90, c=colour, marker=marker, edgecolors="black", linewidths=0.6,
                           zorder=5, label=label)
        ax.set(xlabel="PTB best test log-perplexity", ylabel="WikiText-2 best test log-perplexity",
               title=f"{report['architectures']} architectures: Pearson r = {report['pearson_r']:.2f}, "
                     f"Kendall tau = {report['kendall_tau']:.2f}")
        ax.title.set_fontsize(9)
        ax.legend(loc="upper left")
        written = save_figure(fig, Path(out_dir) / "ptb-wt2-transfer", formats)
        plt.close(fig)
    return written


def nmt_transfer_figure(report: dict, out_dir: Path, formats) -> list[Path]:
    """Two heatmaps: Kendall tau of dev BLEU and of decode time between every two NMTHPO pairs (blank where
    they share fewer than 3 configurations), each cell with tau and the shared count."""
    import matplotlib.pyplot as plt

    from benchmarks.nmt.transfer import PAIR_METRICS

    names = [n[4:] for n in report["pairs"]]
    with _rc():
        fig, axes = plt.subplots(1, 2, figsize=(9.6, 4.4), constrained_layout=True)
        for ax, (metric, title) in zip(axes, PAIR_METRICS.items()):
            tau = np.asarray(report["metrics"][metric]["tau"], dtype=float)
            shared = report["metrics"][metric]["shared"]
            image = ax.imshow(np.ma.masked_invalid(tau), vmin=-1, vmax=1, cmap="RdBu_r")
            for i in range(len(names)):
                for j in range(len(names)):
                    if i != j and np.isfinite(tau[i, j]):
                        ax.text(j, i, f"{tau[i, j]:+.2f}\n({shared[i][j]})", ha="center", va="center", fontsize=7.5,
                                color="white" if abs(tau[i, j]) > 0.6 else "black")
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
            ax.set_yticks(range(len(names)), names)
            ax.grid(False)
            ax.set_title(f"Kendall tau of {title} between pairs\n(shared configurations in brackets)", fontsize=9)
        fig.colorbar(image, ax=axes, shrink=0.8, label="Kendall tau-b")
        written = save_figure(fig, Path(out_dir) / "nmt-transfer", formats)
        plt.close(fig)
    return written


def sparsity_figure(report: dict, out_dir: Path, formats) -> list[Path]:
    """Figure 7: histogram of graph-edit-distance upper bounds between random pairs."""
    import matplotlib.pyplot as plt

    bounds = np.asarray(report["ged_upper_bound"])
    with _rc():
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        ax.hist(bounds, bins=np.arange(bounds.min() - 0.5, bounds.max() + 1.5, 1), color="tab:blue", alpha=0.85)
        ax.axvline(np.median(bounds), color="black", linestyle="--", label=f"median {np.median(bounds):.0f}")
        ax.set(xlabel="graph edit distance (upper bound)", ylabel="pairs",
               title=f"{report['benchmark']}: {report['pairs']} random pairs, {report['time_limit_s']:g} s each")
        ax.legend()
        written = save_figure(fig, Path(out_dir) / f"{report['benchmark']}-sparsity", formats)
        plt.close(fig)
    return written


def features_figure(benchmark, kinds, out_dir: Path, formats) -> list[Path]:
    """Figure 8: each feature kind's first two principal components, coloured by best test perplexity
    (log scale; architectures that did not train all epochs in grey)."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    from benchmarks.core.features import features
    from benchmarks.cells.paper_analyses import best_test_perplexity, complete_rows

    rows = complete_rows(benchmark)
    other = np.setdiff1d(np.arange(benchmark.search.n), rows)
    best = best_test_perplexity(benchmark)
    with _rc():
        fig, axes = plt.subplots(1, len(kinds), figsize=(4.6 * len(kinds), 4.0), squeeze=False)
        for ax, kind in zip(axes[0], kinds):
            matrix = np.asarray(features(benchmark, kind), dtype=np.float64)
            centred = matrix - matrix.mean(axis=0)
            _, _, components = np.linalg.svd(centred, full_matrices=False)
            xy = centred @ components[:2].T
            ax.scatter(xy[other, 0], xy[other, 1], s=2, c="lightgrey", rasterized=True, label="incomplete runs")
            points = ax.scatter(xy[rows, 0], xy[rows, 1], s=2, c=best[rows], cmap="viridis_r",
                                norm=LogNorm(vmin=np.nanmin(best[rows]), vmax=np.nanquantile(best[rows], 0.95)),
                                rasterized=True)
            ax.set(title=kind, xlabel="PC 1", ylabel="PC 2")
            ax.legend(loc="upper right", markerscale=4)
        fig.colorbar(points, ax=axes[0].tolist(), label="best test perplexity")
        fig.suptitle(f"{benchmark.name}: architecture features, first two principal components (paper Fig. 8)")
        written = save_figure(fig, Path(out_dir) / f"{benchmark.name}-features", formats)
        plt.close(fig)
    return written
