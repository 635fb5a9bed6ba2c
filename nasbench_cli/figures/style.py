"""How every figure looks: sizes and options, the colour-blind-safe palette and each algorithm's fixed
style, titles, the regret floor, legends. `plotting` and `fronts` draw with these."""
import zlib
from dataclasses import dataclass

import numpy as np

from benchmarks.core.catalog import NMT_PAIRS
from nasbench_cli.results import aggregate

REGRET_FLOOR = 1e-3

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
    # learning-curve methods (stars), the one-epoch baseline, syne-tune's schedulers (plus signs: the colour of
    # our algorithm of the same kind)
    "dpl": ("teal", "*"), "dyhpo": ("rose", "*"), "ftpfn": ("sky", "*"), "top1e": ("grey", "X"),
    "st-rs": ("black", "P"), "st-bore": ("sky", "p"), "st-kde": ("orange", "P"), "st-rea": ("green", "P"),
    "st-asha": ("wine", "P"), "st-bohb": ("vermillion", "P"), "st-asha-bore": ("teal", "P"),
    "st-moasha": ("rose", "d"), "st-mo-rea": ("teal", "d"),
    # ASHA with Gaussian-process proposals (hexagons)
    "mobster": ("green", "h"), "hypertune": ("blue", "h"),
}
_OTHER_MARKERS = ("<", ">", "H", "8")            # never a registry algorithm's
_WORKER_DASHES = {1: "-", 4: "--", 16: (0, (1, 1.2))}
_OTHER_DASHES = ("-.", (0, (5, 1.5, 1, 1.5)), (0, (3, 1, 1, 1, 1, 1)))

BENCHMARK_TITLES = {"ptb": "NAS-Bench-NLP, PTB", "wt2": "NAS-Bench-NLP, WikiText-2", "bert": "NAS-Bench-BERT, GLUE",
                    "gpt-s": "HW-GPT-Bench, space s", "gpt-m": "HW-GPT-Bench, space m", "gpt-l": "HW-GPT-Bench, space l",
                    **{f"nmt-{p}": f"NMTHPO, {p}" for p in NMT_PAIRS},
                    **{f"nmt-{p}-updates": f"NMTHPO, {p}, cost-aware clock"
                       for p in NMT_PAIRS},
                    "lora-fr-en": "NMTLC, LoRA fine-tuning fr-en", "lora-zh-en": "NMTLC, LoRA fine-tuning zh-en"}
REGRET_MEANINGS = {"bert": "best GLUE of the 500 − GLUE (points)",   # default: test log-perplexity − L*
                   **{f"gpt-{s}": "perplexity − the table's lowest" for s in "sml"},   # the title names the data
                   **{f"nmt-{p}{suffix}": "the table's best dev BLEU − BLEU (points)"
                      for p in NMT_PAIRS for suffix in ("", "-updates")},
                   "lora-fr-en": "dev perplexity − the table's lowest", "lora-zh-en": "dev perplexity − the table's lowest"}


def regret_meaning(benchmark: str, per_algo: dict | None = None) -> str:
    """What the regret axis measures: from the records' objectives and constraints when given."""
    first = next((rs[0] for rs in (per_algo or {}).values() if rs), {})
    if first.get("objectives"):
        within = f" within {' and '.join(first['constraints'])}" if first.get("constraints") else ""
        what = {"hv-range": "hypervolume regret over the table's range", "igd+": "IGD+ over the table's range"}.get(
            first.get("indicator"), "hypervolume regret")
        return f"{what} on {','.join(first['objectives'])}{within} (normalised)"
    meaning = REGRET_MEANINGS.get(benchmark, "test log-perplexity − L*")
    if first.get("constraints"):
        meaning = meaning.replace("L*", "best feasible").replace("the 500", "the feasible").replace(
            "the table's", "the feasible")
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
    """`algo_style` plus what keeps overlapping curves visible without ranking them: every curve has the
    same width (no algorithm looks weaker for being drawn later), and the k-th of `count` curves puts
    its markers at its own offset along the line, so the markers of identical curves do not coincide."""
    return {**algo_style(label), "linewidth": LINE_WIDTH, "markersize": 4.5, "zorder": 2 + position,
            "markevery": (0.02 + 0.09 * (position % 11) / 11, 0.1)}


LINE_WIDTH = 1.9


def _time_axis(benchmark: str) -> str:
    """The x-axis of time figures: simulated hours, or evaluations on a benchmark without training times."""
    if aggregate.clock_unit_s(benchmark) == 1.0:
        return f"{aggregate.clock_label(benchmark)} (log scale)"
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
