"""The critical-difference diagram across benchmarks (Demšar 2006, drawn as autorank draws it)."""
import numpy as np

from nasbench_cli.figures.style import DEFAULT_OPTIONS, FigureOptions, algo_style


def cd_figure(result: dict, options: FigureOptions = DEFAULT_OPTIONS):
    """A rank axis (1 = best, left), each algorithm's mean rank with its name, a bar joining the groups
    whose mean ranks differ by less than the critical difference, and the CD itself above the axis. Each
    algorithm's line has its colour and, at its elbow, its marker (as in every other figure), so two
    algorithms of one colour (tpe and optuna, rs and st-rs) are told apart in print."""
    import matplotlib.pyplot as plt

    labels = result["labels"]
    ranks = np.array([result["mean_rank"][label] for label in labels])
    order = list(np.argsort(ranks, kind="stable"))
    k = len(labels)
    half = (k + 1) // 2
    rows = max(half, k - half)
    width, height = options.figsize((7.4, 1.5 + 0.3 * rows + 0.18 * len(result["cliques"])))
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(-(rows * 0.55 + 0.35 * len(result["cliques"]) + 0.3), 1.6)
    ax.axis("off")
    ax.hlines(0, 1, k, color="black", linewidth=1.0)
    for tick in range(1, k + 1):
        ax.vlines(tick, 0, 0.18, color="black", linewidth=1.0)
        ax.text(tick, 0.3, str(tick), ha="center", va="bottom", fontsize=9)
    cd = result["cd"]
    ax.hlines(1.15, 1, 1 + cd, color="black", linewidth=1.6)
    ax.vlines([1, 1 + cd], 1.05, 1.25, color="black", linewidth=1.0)
    ax.text(1 + cd / 2, 1.3, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    for slot, index in enumerate(order):           # best half to the left, the rest to the right
        left = slot < half
        row = slot if left else k - 1 - slot
        y = -(row + 1) * 0.55 - 0.35 * len(result["cliques"])
        x_text = 0.55 if left else k + 0.45
        style = algo_style(labels[index])
        ax.plot([ranks[index], ranks[index], x_text], [0, y, y], color=style["color"], linewidth=1.2)
        ax.plot([ranks[index]], [y], color=style["color"], marker=style["marker"], markersize=6, linestyle="none",
                gid=f"marker:{labels[index]}")    # the run's marker: algorithms of one colour stay apart
        ax.text(x_text, y, f"{labels[index]} ({ranks[index]:.2f})" if left else f"({ranks[index]:.2f}) {labels[index]}",
                ha="left" if left else "right", va="bottom", fontsize=9, color="black")
    for g, clique in enumerate(result["cliques"]):
        xs = [result["mean_rank"][label] for label in clique]
        y = -0.2 - 0.3 * g
        ax.hlines(y, min(xs) - 0.03, max(xs) + 0.03, color="0.15", linewidth=3.0)
    names = result["benchmarks"]      # a suite's 23 task names in one title made the figure 5,700 px wide
    title = options.title or (", ".join(names) if len(names) <= 4 else f"{len(names)} tasks ({names[0]}, ..., {names[-1]})")
    ax.set_title(f"{title}: mean rank of final regret over {result['blocks']} (benchmark, trial) blocks\n"
                 f"Friedman p = {result['friedman_p']:.2g}; bars join algorithms within the Nemenyi critical "
                 f"difference (α = {result['alpha']:g})", fontsize=10)
    return fig
