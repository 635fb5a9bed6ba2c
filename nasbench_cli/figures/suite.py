"""A suite's aggregate figure: per algorithm, the IQM and the mean of normalised regret across the suite's
tasks, each with its 95% stratified-bootstrap interval (as rliable draws them)."""
import numpy as np

from nasbench_cli.figures.style import DEFAULT_OPTIONS, FigureOptions, algo_style
from nasbench_cli.suites.definition import task_count


def aggregate_figure(data: dict, options: FigureOptions = DEFAULT_OPTIONS):
    import matplotlib.pyplot as plt

    rows = sorted(data["algorithms"].items(), key=lambda item: -item[1]["iqm"])
    labels = [label for label, _ in rows]
    fig, axes = plt.subplots(1, 2, figsize=options.figsize((7.4, max(2.6, 0.5 + 0.34 * len(rows)))), sharey=True)
    for ax, key, title in ((axes[0], "iqm", "IQM"), (axes[1], "mean", "mean")):
        for y, (label, row) in enumerate(rows):
            low, high = row[f"{key}_ci95"]
            color = algo_style(label)["color"]
            ax.barh(y, high - low, left=low, height=0.6, color=color, alpha=0.75)
            ax.vlines(row[key], y - 0.3, y + 0.3, color="black", linewidth=1.4)
        ax.set_title(f"{title} of normalised regret", fontsize=10)
        ax.set_xlabel("normalised regret (lower is better)")
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(np.arange(len(labels)), [f"{l} ({task_count(data['algorithms'][l]['tasks'])})" for l in labels])
    indicator = data.get("indicator", "hv")
    fig.suptitle(f"suite {data['suite']} v{data['version']}: {task_count(len(data['tasks']))}, 95% stratified-bootstrap "
                 "intervals" + ("" if indicator == "hv" else f"; multi-objective tasks by {indicator}"), fontsize=10)
    fig.tight_layout()
    return fig
