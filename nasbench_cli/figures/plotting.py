"""The figures of `nasbench plot`: regret vs simulated time, CDF of final regret, mean rank, and for
runs with simulated workers, regret per worker count and worker utilisation.

matplotlib (Agg backend) is imported inside the functions. Each algorithm keeps one colour and line
style in every figure (`algo_style`); a label `algo@Kw` keeps the algorithm's colour and takes the line
style of its worker count. Regret is drawn on a log axis with a floor: values below
`REGRET_FLOOR` (including 0, reached when the incumbent is the architecture and epoch holding L*)
are drawn at the floor, and the axis label says so.
"""
import io
from pathlib import Path

import numpy as np

from nasbench_cli.results import aggregate
from nasbench_cli.figures.style import (DEFAULT_OPTIONS, PARTIAL_ALPHA, REGRET_FLOOR, FigureOptions, _floor, _label,
                                       _legend, _rc, _time_axis, _title, legend_layout, line_style, regret_meaning)

DPI = 150
FORMATS = ("png", "pdf", "svg")


def parse_formats(text: str) -> list[str]:
    """`png,pdf` -> ["png", "pdf"]; UserError naming an unknown format."""
    from benchmarks.core.errors import UserError
    from nasbench_cli.results.files import parse_name_list

    formats = parse_name_list(text.lower()) or []
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise UserError(f"unknown figure format {', '.join(bad) or repr(text)}; choose from {', '.join(FORMATS)}")
    return formats
def _plot_with_partial(ax, x, y, n_present, n_total, label, style, band=None) -> bool:
    """Draw y(x) lighter where fewer than all `n_total` trials are present, solid from where all
    are (the label goes on the solid part); `band` = (low, high) is shaded on the solid part only
    (with few trials present it is too wide to read). Returns whether a lighter part was drawn."""
    full = n_present >= n_total
    first_full = int(np.argmax(full)) if full.any() else len(x)
    partial = first_full > 0 and np.isfinite(y[:first_full]).any()
    cut = min(first_full + 1, len(x))        # overlap one point so that the line is continuous
    if partial:
        ax.plot(x[:cut], y[:cut], alpha=PARTIAL_ALPHA, label=None if first_full < len(x) else label,
                **{**style, "marker": None})
    if first_full < len(x):
        ax.plot(x[first_full:], y[first_full:], label=label, **style)
    if band is not None:
        low, high = band
        ok = np.isfinite(low)
        if ok.any():
            ax.fill_between(x, low, high, where=ok & full, color=style["color"], alpha=0.12, linewidth=0,
                            zorder=1)
    return partial


def _regret_ylim(means, lows) -> tuple[float, float]:
    """Bottom: a little under the lowest mean (bands may leave the axes); top: over the highest."""
    means = np.concatenate([m[np.isfinite(m)] for m in means] or [np.empty(0)])
    if not len(means):
        return REGRET_FLOOR, 1.0
    bottom = max(REGRET_FLOOR, float(means.min()) / 2.0)
    top = float(means.max()) * 2.0
    return bottom / 1.05, max(top, bottom * 10)


def regret_figure(benchmark: str, per_algo: dict, grid_s, options: FigureOptions = DEFAULT_OPTIONS):
    """Mean regret over trials (present ones) vs simulated hours, with a band (options), log-log."""
    import matplotlib.pyplot as plt

    grid_h = np.asarray(grid_s) / aggregate.clock_unit_s(benchmark)
    fig, ax = plt.subplots(figsize=options.figsize())
    partial, means, lows = False, [], []
    for k, (algo, records) in enumerate(per_algo.items()):
        band = aggregate.mean_band(aggregate.regret_matrix(records, grid_s), kind=options.band_kind)
        mean = _floor(band["mean"])
        means.append(np.where(np.isfinite(band["mean"]), mean, np.nan))
        lows.append(band["low"])
        shade = (_floor(band["low"]), _floor(band["high"])) if options.bands else None
        partial |= _plot_with_partial(ax, grid_h, mean, band["n"], len(records), _label(algo, records),
                                      line_style(algo, k, len(per_algo)), band=shade)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(grid_h[0], grid_h[-1])
    ax.set_ylim(*_regret_ylim(means, lows))
    ax.set_xlabel(_time_axis(benchmark))
    ax.set_ylabel(f"regret: {regret_meaning(benchmark, per_algo)}\n(log scale; values < {REGRET_FLOOR:g} drawn at {REGRET_FLOOR:g})")
    banded = any(len(records) >= 2 for records in per_algo.values())
    subtitle = (f"mean over trials, {aggregate.BAND_KINDS[options.band_kind]}" if options.bands else
                "mean over trials") if banded else "one trial per algorithm (no interval)"
    against = aggregate.clock_label(benchmark) if aggregate.clock_unit_s(benchmark) == 1.0 else "simulated time"
    ax.set_title(f"{_title(benchmark, options)}: regret vs {against}\n{subtitle}")
    _legend(ax, partial)
    return fig


def cdf_figure(benchmark: str, per_algo: dict, options: FigureOptions = DEFAULT_OPTIONS):
    """Empirical CDF of the final regret of every trial, one step curve per algorithm."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=options.figsize())
    finals = {a: aggregate.final_regrets(r) for a, r in per_algo.items()}
    finite = np.concatenate([v[np.isfinite(v)] for v in finals.values()] or [np.empty(0)])
    low = max(REGRET_FLOOR, float(finite.min()) if len(finite) else REGRET_FLOOR) / 1.5
    high = (float(finite.max()) if len(finite) else 1.0) * 1.5
    for k, (algo, values) in enumerate(finals.items()):
        x, y = aggregate.ecdf(_floor(values))
        xs = np.concatenate([[low], x, [high]])
        ys = np.concatenate([[0.0], y, [y[-1] if len(y) else 0.0]])
        ax.step(xs, ys, where="post", label=_label(algo, per_algo[algo]), **line_style(algo, k, len(finals)))
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"final regret: {regret_meaning(benchmark, per_algo)}\n(log scale; values < {REGRET_FLOOR:g} drawn at {REGRET_FLOOR:g})")
    ax.set_ylabel("fraction of trials with final regret ≤ x")
    budgets = sorted({r["budget_s"] / aggregate.clock_unit_s(benchmark) for rs in per_algo.values() for r in rs})
    budget = ", ".join(f"{b:g}" for b in budgets)
    ax.set_title(f"{_title(benchmark, options)}: CDF of final regret\n"
                 f"after {budget} {aggregate.clock_label(benchmark)} per trial")
    _legend(ax)
    return fig


def rank_figure(benchmark: str, per_algo: dict, grid_s, options: FigureOptions = DEFAULT_OPTIONS):
    """Mean rank among algorithms (1 = lowest regret) vs simulated hours."""
    import matplotlib.pyplot as plt

    grid_h = np.asarray(grid_s) / aggregate.clock_unit_s(benchmark)
    fig, ax = plt.subplots(figsize=options.figsize())
    ranks = aggregate.mean_rank(per_algo, grid_s)
    drawn, partial = 0, False
    for k, (algo, rank) in enumerate(ranks.items()):
        if np.isfinite(rank["mean"]).any():
            partial |= _plot_with_partial(ax, grid_h, rank["mean"], rank["n"], len(per_algo[algo]),
                                          _label(algo, per_algo[algo]), line_style(algo, k, len(ranks)))
            drawn += 1
    ax.set_xscale("log")
    ranked = np.nonzero(np.any([np.isfinite(r["mean"]) for r in ranks.values()], axis=0))[0]
    start = grid_h[ranked[0]] if len(ranked) and ranked[0] < len(grid_h) - 1 else grid_h[0]
    ax.set_xlim(start, grid_h[-1])
    n_algos = len(per_algo)
    ax.set_ylim(0.8, max(n_algos, 2) + 0.2)
    ax.set_yticks(range(1, max(n_algos, 2) + 1))
    ax.invert_yaxis()
    ax.set_xlabel(_time_axis(benchmark))
    ax.set_ylabel("mean rank among algorithms (1 = lowest regret)")
    over = aggregate.clock_label(benchmark) if aggregate.clock_unit_s(benchmark) == 1.0 else "time"
    ax.set_title(f"{_title(benchmark, options)}: mean rank over {over}\nranked per trial index, averaged over trials")
    if not drawn:
        ax.text(0.5, 0.5, "ranking needs at least two algorithms\nwith the same trial index",
                transform=ax.transAxes, ha="center", va="center", color="0.4")
    _legend(ax, partial)
    return fig


def _workers_of(records) -> int:
    from nasbench_cli.results.files import record_workers

    return record_workers(records[0]) if records else 1


def regret_by_workers_figure(benchmark: str, per_algo: dict, grid_s, options: FigureOptions = DEFAULT_OPTIONS):
    """One panel per worker count: mean regret (with a band, options) vs simulated wall-clock hours."""
    import matplotlib.pyplot as plt

    from nasbench_cli.results.files import split_label

    counts = sorted({_workers_of(records) for records in per_algo.values()})
    grid_h = np.asarray(grid_s) / aggregate.clock_unit_s(benchmark)
    fig, axes = plt.subplots(1, len(counts), figsize=options.figsize((3.6 * len(counts) + 1.4, 3.9)), sharey=True,
                             squeeze=False)
    means, lows = [], []
    for ax, count in zip(axes[0], counts):
        here = [(label, records) for label, records in per_algo.items() if _workers_of(records) == count]
        for k, (label, records) in enumerate(here):
            band = aggregate.mean_band(aggregate.regret_matrix(records, grid_s), kind=options.band_kind)
            mean = _floor(band["mean"])
            means.append(np.where(np.isfinite(band["mean"]), mean, np.nan))
            lows.append(band["low"])
            algo = split_label(label)[0]
            shade = (_floor(band["low"]), _floor(band["high"])) if options.bands else None
            _plot_with_partial(ax, grid_h, mean, band["n"], len(records), f"{algo} (n={len(records)})",
                               {**line_style(algo, k, len(here)), "linestyle": "-"}, band=shade)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(grid_h[0], grid_h[-1])
        ax.set_title(f"{count} worker{'s' if count > 1 else ''}")
        ax.set_xlabel(_time_axis(benchmark))
    axes[0][0].set_ylim(*_regret_ylim(means, lows))
    axes[0][0].set_ylabel(f"regret (log; < {REGRET_FLOOR:g} drawn at {REGRET_FLOOR:g})")
    handles = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label.split(" (n=")[0], handle)
    fig.legend(list(handles.values()), list(handles), **legend_layout(len(handles), below=(0.5, 0.0),
                                                                      beside=(1.0, 0.9)))
    band = f", {aggregate.BAND_KINDS[options.band_kind]}" if options.bands else ""
    fig.suptitle(f"{_title(benchmark, options)}: regret vs wall-clock time with K workers (mean{band})")
    fig.tight_layout()
    return fig


UTILISATION_BINS = 100


def utilisation_figure(benchmark: str, per_algo: dict, grid_s, options: FigureOptions = DEFAULT_OPTIONS):
    """Share of busy workers over simulated wall-clock time (exact mean within each of 100 bins, then
    the mean over trials), one line per run label with more than one worker."""
    import matplotlib.pyplot as plt

    unit = aggregate.clock_unit_s(benchmark)
    end_h = max(float(r["budget_s"]) for rs in per_algo.values() for r in rs) / unit
    edges_h = np.linspace(0.0, end_h, UTILISATION_BINS + 1)
    centres_h = (edges_h[:-1] + edges_h[1:]) / 2
    fig, ax = plt.subplots(figsize=options.figsize())
    parallel = [(label, records) for label, records in per_algo.items() if _workers_of(records) > 1]
    for k, (label, records) in enumerate(parallel):   # one worker is busy until its trial ends: not drawn
        shares = [aggregate.busy_share_binned(r, edges_h * unit) for r in records if "jobs" in r]
        if shares:
            ax.plot(centres_h, np.mean(shares, axis=0), label=f"{label} (n={len(shares)})",
                    **line_style(label, k, len(parallel)))
    ax.set_xlim(0, end_h)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel(_time_axis(benchmark).replace(", log scale", ""))
    ax.set_ylabel(f"share of workers busy\n(mean per {end_h / UTILISATION_BINS:g} {aggregate.clock_short(benchmark)} bin, over trials)")
    ax.set_title(f"{_title(benchmark, options)}: worker utilisation\n"
                 "idle: waiting for results (a rung to finish, RE's first population) or nothing left to start")
    _legend(ax)
    return fig


FIGURES = (("regret-vs-time", regret_figure, True), ("final-regret-cdf", cdf_figure, False),
           ("mean-rank", rank_figure, True))
PARALLEL_FIGURES = (("regret-by-workers", regret_by_workers_figure), ("worker-utilisation", utilisation_figure))


def save_figure(fig, stem: Path, formats) -> list[Path]:
    """Write `fig` as stem.<fmt> for each format, atomically and without timestamps; returns paths."""
    from benchmarks.core.atomic import write_bytes_atomic

    written = []
    for fmt in formats:
        buffer = io.BytesIO()
        metadata = {"CreationDate": None} if fmt == "pdf" else {"Date": None} if fmt == "svg" else {}
        fig.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
        written.append(write_bytes_atomic(stem.with_name(f"{stem.name}.{fmt}"), buffer.getvalue()))
    return written


def figures_for(per_algo: dict) -> list:
    """(name, maker, needs the time grid) of each figure drawn for one benchmark's runs."""
    records = [r for rs in per_algo.values() for r in rs]
    parallel = any(_workers_of(records) > 1 for records in per_algo.values())
    # a ranking needs two algorithms: with one, the mean-rank figure would be a flat line at 1
    figures = [(name, make, needs_grid) for name, make, needs_grid in FIGURES
               if name != "mean-rank" or len(per_algo) > 1]
    if parallel:      # runs with simulated workers: per worker count, and how busy the workers were
        figures += [(name, make, True) for name, make in PARALLEL_FIGURES]
    if records and records[0].get("objectives"):   # multi-objective: the fronts in objective space
        from nasbench_cli.figures.fronts import front_figure

        figures.append(("fronts", front_figure, False))
    return figures


def plot_benchmark(benchmark: str, per_algo: dict, out_dir, formats=("png", "pdf"),
                   options: FigureOptions = DEFAULT_OPTIONS, progress=None) -> list[Path]:
    """Write the figures of one benchmark into `out_dir` (`figure_names` says which); returns the files
    written. `progress(name)` is called before each figure is drawn."""
    import matplotlib.pyplot as plt

    records = [r for rs in per_algo.values() for r in rs]
    grid_s = aggregate.time_grid_s(records)
    written = []
    figures = figures_for(per_algo)
    with _rc():
        for name, make, needs_grid in figures:
            if progress is not None:
                progress(f"{benchmark}-{name}")
            fig = make(benchmark, per_algo, grid_s, options) if needs_grid else make(benchmark, per_algo, options)
            try:
                written += save_figure(fig, Path(out_dir) / f"{benchmark}-{name}", formats)
            finally:
                plt.close(fig)
    return written
