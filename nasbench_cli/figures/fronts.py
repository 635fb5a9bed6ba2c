"""Fronts in objective space: the benchmark's true Pareto front and each algorithm's median attainment
surface (the 50% empirical attainment function over its trials' final fronts, moocore), for the
loss against the first hardware objective of a multi-objective run (with three objectives: the
projection onto those two, each trial's front re-filtered there)."""
import numpy as np

from nasbench_cli.figures.style import DEFAULT_OPTIONS, _label, _legend, _title, line_style


def scored_front(benchmark, space, front) -> np.ndarray:
    """[m, k] minimised test values of a record's final front ([[id, epoch], ...]); members infeasible on
    test left out."""
    if not front:
        return np.empty((0, len(space.objectives)))
    rows = benchmark.search.indices_of([p[0] for p in front])
    epochs = np.array([p[1] for p in front])
    points = space.static[rows].copy()
    points[:, space.loss_column] = benchmark.test_loss[rows, epochs - 1]
    return points[space.loss_feasible(points[:, space.loss_column]) & np.isfinite(points).all(axis=1)]


def median_attainment(fronts: list) -> np.ndarray:
    """The 50% attainment surface [p, 2] of several 2-D fronts (minimised), as moocore.eaf gives it."""
    import moocore

    sets = [f for f in fronts if len(f)]
    if len(sets) * 2 < len(fronts) or not sets:   # fewer than half the trials found anything
        return np.empty((0, 2))
    points = np.vstack(sets)
    labels = np.concatenate([np.full(len(f), k + 1) for k, f in enumerate(sets)])
    surface = moocore.eaf(points, labels, percentiles=[50 * len(fronts) / len(sets)]
                          if len(sets) < len(fronts) else [50])
    return np.asarray(surface)[:, :2]


def front_figure(benchmark_name: str, per_algo: dict, options=DEFAULT_OPTIONS):
    """True front and median attainment surfaces of the final fronts, natural units on both axes."""
    import matplotlib.pyplot as plt

    from benchmarks.core.objectives import natural, objective_for
    from benchmarks.core.pareto import nondominated, objective_space
    from benchmarks.core.registry import load_benchmark
    from benchmarks.core.problem import scoring_problem

    first = next(rs[0] for rs in per_algo.values() if rs)
    benchmark = load_benchmark(benchmark_name)
    objectives, constraints = scoring_problem(benchmark_name, first["objectives"], first.get("constraints") or ())
    space = objective_space(benchmark, objectives, constraints)
    loss_col = space.loss_column
    other_col = next(c for c in range(len(objectives)) if c != loss_col)
    cols = [other_col, loss_col]
    fig, ax = plt.subplots(figsize=options.figsize())

    def draw(points, **style):
        points = points[np.argsort(points[:, 0])]
        x, y = natural(objectives[other_col], points[:, 0]), natural(objectives[loss_col], points[:, 1])
        ax.step(x, y, where="post", **style)

    true = space.front_points[:, cols]
    true = true[nondominated(true)]
    # the legend counts the true front as `report` does (all its objectives); a 3-objective front's 2-D
    # projection draws only the points not dominated in the two objectives shown
    count = f"{len(space.front_points)} architectures" + \
        (f", {len(true)} on this projection" if len(true) != len(space.front_points) else "")
    draw(true, color="#555555", linestyle=(0, (1, 1)), linewidth=1.4, marker="D", markersize=4,
         label=f"true front ({count})", zorder=5)
    for k, (algo, records) in enumerate(per_algo.items()):
        fronts = []
        for record in records:
            points = scored_front(benchmark, space, record.get("front"))[:, cols]
            fronts.append(points[nondominated(points)] if len(points) else points)
        surface = median_attainment(fronts)
        if len(surface):
            draw(surface, label=f"{_label(algo, records)}: median attainment", alpha=0.9,
                 **line_style(algo, k, len(per_algo)))
    if objectives[other_col] in ("params", "flops"):
        ax.set_xscale("log")
    x_obj, y_obj = objective_for(objectives[other_col], benchmark_name), objective_for(objectives[loss_col], benchmark_name)
    ax.set_xlabel(f"{x_obj.name} ({x_obj.unit}{', log scale' if ax.get_xscale() == 'log' else ''})")
    side = "dev" if benchmark_name.startswith(("nmt-", "lora-")) else "test"     # only dev numbers published there
    ax.set_ylabel(f"{side} {y_obj.name} ({y_obj.unit}, {'higher' if y_obj.maximise else 'lower'} is better)")
    projection = " (projection of three objectives)" if len(objectives) == 3 else ""
    from nasbench_cli.results.aggregate import clock_label, clock_unit_s

    budgets = sorted({r["budget_s"] / clock_unit_s(benchmark_name) for rs in per_algo.values() for r in rs})
    ax.set_title(f"{_title(benchmark_name, options)}: final fronts{projection}\nmedian attainment surface over trials "
                 f"after {', '.join(f'{b:g}' for b in budgets)} {clock_label(benchmark_name)}")
    _legend(ax)
    return fig
