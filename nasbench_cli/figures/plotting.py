"""The figures of `nasbench plot`: regret vs simulated time, CDF of final regret, mean rank, and for
runs with simulated workers, regret per worker count and worker utilisation.

matplotlib (Agg backend) is imported inside the functions. Each algorithm keeps one colour and line
style in every figure (`algo_style`); a label `algo@Kw` keeps the algorithm's colour and takes the line
style of its worker count. Regret is drawn on a log axis with a floor: values below
`REGRET_FLOOR` (including 0, reached when the incumbent is the architecture and epoch holding L*)
are drawn at the floor, and the axis label says so.
"""
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nasbench_cli.results import aggregate

REGRET_FLOOR = 1e-3
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
FIGSIZE_IN = (7.4, 4.2)


@dataclass(frozen=True)
class FigureOptions:
    """What `nasbench plot` lets a user choose about every figure."""
    bands: bool = True              # shade the interval around mean curves
    band_kind: str = "ci95"         # aggregate.BAND_KINDS: ci95 (95% t-interval) or sem (±1 standard error)
    title: str | None = None        # replaces the benchmark's name in the titles
    width_in: float | None = None   # figure width in inches (height keeps the proportions)

    def figsize(self, size=FIGSIZE_IN) -> tuple:
        if self.width_in is None:
            return size
        return (self.width_in, size[1] * self.width_in / size[0])


DEFAULT_OPTIONS = FigureOptions()

# Colour-blind-safe palette: Okabe-Ito's eight (yellow left out: unreadable on white) plus Paul Tol's
# indigo, olive, wine, teal and rose. Each registry algorithm has a fixed (colour, marker) pair, unique
# across the registry; the algorithms usually compared together (the paper's eight; the multi-
# objective seven) have distinct colours. Line style says the worker count. Any other label (a plugin,
# a --label, a run with changed settings) hashes into the palette with a marker no registry
# algorithm uses, so it never looks like one.
PALETTE = {"black": "#000000", "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "blue": "#0072B2",
           "vermillion": "#D55E00", "purple": "#CC79A7", "grey": "#777777", "indigo": "#332288",
           "olive": "#999933", "wine": "#882255", "teal": "#44AA99", "rose": "#CC6677"}
_STYLES = {
    "rs50e": ("black", "o"), "rs10e": ("grey", "o"), "hb": ("vermillion", "s"), "hb-release": ("vermillion", "v"),
    "asha": ("wine", "X"), "ahb": ("rose", "s"), "bo10d": ("blue", "^"), "bo50d": ("sky", "^"),
    "re": ("green", "D"), "tpe": ("orange", "v"), "smac": ("purple", "P"), "prs": ("olive", "o"),
    "phb": ("teal", "s"), "lcbo": ("indigo", "*"), "optuna": ("orange", "h"), "dehb": ("olive", "D"),
    "smac-mf": ("purple", "p"), "rs": ("black", "v"), "bo": ("blue", "v"),
    "mo-rs": ("grey", "d"), "mo-asha": ("wine", "d"), "mo-re": ("green", "d"), "parego": ("blue", "d"),
    "nsga2": ("orange", "d"), "motpe": ("purple", "d"), "mo-lcbo": ("indigo", "d"),
}
_OTHER_MARKERS = ("<", ">", "H", "8")            # never a registry algorithm's
_WORKER_DASHES = {1: "-", 4: "--", 16: (0, (1, 1.2))}
_OTHER_DASHES = ("-.", (0, (5, 1.5, 1, 1.5)), (0, (3, 1, 1, 1, 1, 1)))

BENCHMARK_TITLES = {"ptb": "NAS-Bench-NLP, PTB", "wt2": "NAS-Bench-NLP, WikiText-2", "bert": "NAS-Bench-BERT, GLUE",
                    "gpt-s": "HW-GPT-Bench, space s", "gpt-m": "HW-GPT-Bench, space m", "gpt-l": "HW-GPT-Bench, space l"}
REGRET_MEANINGS = {"bert": "best GLUE of the 500 − GLUE (points)",   # default: test log-perplexity − L*
                   **{f"gpt-{s}": "perplexity − the table's lowest (supernet, OpenWebText)" for s in "sml"}}


def regret_meaning(benchmark: str, per_algo: dict | None = None) -> str:
    """What the regret axis measures: from the records' objectives and constraints when given."""
    first = next((rs[0] for rs in (per_algo or {}).values() if rs), {})
    if first.get("objectives"):
        within = f" within {' and '.join(first['constraints'])}" if first.get("constraints") else ""
        return f"hypervolume regret on {','.join(first['objectives'])}{within} (normalised)"
    meaning = REGRET_MEANINGS.get(benchmark, "test log-perplexity − L*")
    if first.get("constraints"):
        meaning = meaning.replace("L*", "best feasible").replace("the 500", "the feasible")
        meaning += f", within {' and '.join(first['constraints'])}"
    return meaning


def algo_style(name: str) -> dict:
    """{'color', 'linestyle', 'marker'} for a run label: fixed for registry names, a stable hash of the
    name otherwise; a label `algo@Kw` has the algorithm's colour and marker and the line style of K."""
    from nasbench_cli.results.files import split_label

    algo, workers = split_label(name)
    if algo in _STYLES:
        colour, marker = _STYLES[algo]
        color = PALETTE[colour]
    else:
        key = zlib.crc32(algo.encode())
        colours = list(PALETTE.values())
        color = colours[key % len(colours)]
        marker = _OTHER_MARKERS[(key // len(colours)) % len(_OTHER_MARKERS)]
    dash = _WORKER_DASHES.get(workers, _OTHER_DASHES[workers % len(_OTHER_DASHES)])
    return {"color": color, "linestyle": dash, "marker": marker}


def line_style(label: str, position: int, count: int) -> dict:
    """`algo_style` plus what keeps overlapping curves visible: the k-th of `count` curves drawn is
    thinner than the one before it (an identical curve drawn later leaves the earlier one's edges
    showing) and puts its markers at its own offset along the line (markers of identical curves do
    not coincide)."""
    width = 2.6 - 1.4 * position / max(count - 1, 1)
    return {**algo_style(label), "linewidth": width, "markersize": 4.5, "zorder": 2 + position,
            "markevery": (0.02 + 0.09 * (position % 11) / 11, 0.1)}


def _time_axis(benchmark: str) -> str:
    """The x-axis of time figures: simulated hours, or evaluations on a benchmark without training times."""
    if aggregate.clock_unit_s(benchmark) == 1.0:
        return "evaluations (log scale)"
    return "simulated wall-clock time (hours, log scale)"


def _title(benchmark: str, options: FigureOptions = DEFAULT_OPTIONS) -> str:
    return options.title if options.title else BENCHMARK_TITLES.get(benchmark, benchmark)


def _label(algo: str, records) -> str:
    return f"{algo} (n={len(records)})"


def _rc():
    import matplotlib

    matplotlib.use("Agg", force=False)
    return matplotlib.rc_context({
        "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 8.5,
        "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
        "grid.alpha": 0.35, "grid.linewidth": 0.5, "axes.grid.which": "major",
        "lines.linewidth": 1.7, "savefig.bbox": "tight", "savefig.pad_inches": 0.05,
        "pdf.fonttype": 42,
    })


def _floor(values) -> np.ndarray:
    return np.maximum(np.asarray(values, dtype=float), REGRET_FLOOR)


PARTIAL_ALPHA = 0.35
LEGEND_BELOW_FROM = 8     # legend entries from which the legend goes under the axes, in columns
PARTIAL_NOTE = "lighter: before every\ntrial has an incumbent"


def _legend(ax, partial: bool = False, **kwargs):
    """Legend without frame; `partial` adds a grey entry explaining the lighter line segments."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if partial:
        handles.append(Line2D([], [], color="0.3", alpha=PARTIAL_ALPHA))
        labels.append(PARTIAL_NOTE)
    if handles:
        ax.legend(handles, labels, **legend_layout(len(handles), below=(0.5, -0.2), beside=(1.01, 1.0)), **kwargs)


def legend_layout(entries: int, below: tuple, beside: tuple) -> dict:
    """Legend keyword arguments: with LEGEND_BELOW_FROM entries or more, columns under the plot (anchored
    at `below`), else one column beside it (anchored at `beside`)."""
    common = {"frameon": False, "borderaxespad": 0.0, "handlelength": 3.2}
    if entries >= LEGEND_BELOW_FROM:      # many entries: columns under the axes, not a tall list
        return {**common, "loc": "upper center", "bbox_to_anchor": below, "ncol": 4 if entries >= 12 else 3}
    return {**common, "loc": "upper left", "bbox_to_anchor": beside}


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
    against = "evaluations" if aggregate.clock_unit_s(benchmark) == 1.0 else "simulated time"
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
    over = "evaluations" if aggregate.clock_unit_s(benchmark) == 1.0 else "time"
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
