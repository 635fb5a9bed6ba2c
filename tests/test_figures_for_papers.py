"""Figures a paper can use: stable distinct styles, no hidden curve, units, legend order, options, CD diagram."""
import json
import math

import numpy as np
import pytest

from nasbench_cli.results.record import settings_hash
from test_plot import run_cli, trial_record, write_trial

LABELS = ["rs50e", "hb", "asha", "myls", "bo10d", "re", "tpe", "smac", "hb@4w", "asha@4w", "myls@4w"]


def results_folder(root, benchmark="ptb", labels=LABELS, trials=3, seed=0):
    """Every label with `trials` trials; asha@4w and myls@4w have identical trajectories (the case where one
    curve used to hide the other)."""
    rng = np.random.default_rng(seed)
    shared = None
    for label in labels:
        for k in range(trials):
            times = np.sort(rng.uniform(0.5, 90, 6)).tolist()
            regrets = np.minimum.accumulate(rng.uniform(0.05, 1.5, 6)).tolist()
            if label in ("asha@4w", "myls@4w"):
                shared = shared if shared is not None and len(shared) > k else (shared or []) + [(times, regrets)]
                times, regrets = shared[k]
            record = trial_record(label.split("@")[0], k, times, regrets, benchmark=benchmark)
            if "@" in label:
                record["workers"] = int(label.split("@")[1][:-1])
                record["label"] = label
                record["settings_hash"] = settings_hash(benchmark, record["algo"], {}, record["budget_s"],
                                                        record["workers"])
            path = root / benchmark / label / f"trial-{k}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record))
    return root


def _legend_lines(ax_or_fig):
    legend = ax_or_fig.get_legend() if hasattr(ax_or_fig, "get_legend") else ax_or_fig.legends[0]
    from nasbench_cli.figures.style import PARTIAL_NOTE

    return legend, {text.get_text().split(" (n=")[0]: handle
                    for text, handle in zip(legend.get_texts(), legend.legend_handles)
                    if text.get_text() != PARTIAL_NOTE}


def test_styles_are_distinct_stable_and_no_curve_hides_another(tmp_path):
    import matplotlib.pyplot as plt

    from nasbench_cli.figures import plotting
    from nasbench_cli.results import aggregate
    from nasbench_cli.results.files import load_results

    per_algo = load_results(results_folder(tmp_path / "res")).runs["ptb"]
    grid = aggregate.time_grid_s([r for rs in per_algo.values() for r in rs])
    figures = {"regret": plotting.regret_figure("ptb", per_algo, grid), "cdf": plotting.cdf_figure("ptb", per_algo),
               "rank": plotting.rank_figure("ptb", per_algo, grid)}
    try:
        seen = {}
        for name, fig in figures.items():
            ax = fig.axes[0]
            legend, handles = _legend_lines(ax)
            assert sorted(handles) == sorted(LABELS), name              # every run has a legend entry
            looks = {(h.get_color(), h.get_marker(), str(h.get_linestyle())) for h in handles.values()}
            assert len(looks) == len(handles), name                     # no two entries look the same
            for label, handle in handles.items():                       # one look per run in every figure
                assert seen.setdefault(label, (handle.get_color(), handle.get_marker())) == \
                    (handle.get_color(), handle.get_marker()), (name, label)
            # eleven entries: the legend sits under the axes in columns
            assert legend._ncols >= 3
            # identical curves: their markers sit at other places; every curve has one width (none
            # looks weaker for being drawn later)
            lines = [line for line in ax.get_lines() if line.get_label().split(" (n=")[0] in ("asha@4w", "myls@4w")
                     and line.get_alpha() is None]
            a, b = lines[0], lines[1]
            assert np.array_equal(a.get_xdata(), b.get_xdata()) and np.array_equal(a.get_ydata(), b.get_ydata())
            assert a.get_markevery() != b.get_markevery()
            assert len({line.get_linewidth() for line in ax.get_lines() if line.get_alpha() is None}) == 1, name
            assert a.get_zorder() < b.get_zorder()
        # units on the axes
        assert "hours" in figures["regret"].axes[0].get_xlabel()
        assert "log-perplexity" in figures["regret"].axes[0].get_ylabel()
        assert "log-perplexity" in figures["cdf"].axes[0].get_xlabel()
    finally:
        for fig in figures.values():
            plt.close(fig)


def test_options_bands_band_kind_title_width(tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    from nasbench_cli.figures import plotting, style
    from nasbench_cli.results import aggregate
    from nasbench_cli.results.files import load_results

    per_algo = load_results(results_folder(tmp_path / "res", labels=["rs50e", "hb"])).runs["ptb"]
    grid = aggregate.time_grid_s([r for rs in per_algo.values() for r in rs])
    plain = plotting.regret_figure("ptb", per_algo, grid, style.FigureOptions(bands=False, title="My PTB",
                                                                                width_in=3.5))
    sem = plotting.regret_figure("ptb", per_algo, grid, style.FigureOptions(band_kind="sem"))
    ci = plotting.regret_figure("ptb", per_algo, grid)
    try:
        def bands(fig):
            return [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
        assert not bands(plain) and len(bands(sem)) == len(bands(ci)) == 2
        assert plain.axes[0].get_title().startswith("My PTB:") and "interval" not in plain.axes[0].get_title()
        assert plain.get_figwidth() == pytest.approx(3.5)
        assert "standard error" in sem.axes[0].get_title() and "95% t-interval" in ci.axes[0].get_title()
        # a ±1 SE band is narrower than the 95% t-band of the same 3 trials
        width = [np.ptp(b.get_paths()[0].vertices[:, 1]) for b in (bands(sem)[0], bands(ci)[0])]
        assert width[0] < width[1]
    finally:
        for fig in (plain, sem, ci):
            plt.close(fig)


def test_algo_order_is_the_legend_order_and_options_reach_the_files(tmp_path, capsys):
    results = results_folder(tmp_path / "res", labels=["rs50e", "hb", "asha"])
    code, out, err = run_cli(capsys, "plot", results, "--algo", "asha,rs50e,hb", "--no-bands", "--title", "T",
                             "--width", "5", "--format", "svg", "--json")
    assert code == 0, err
    files = json.loads(out)["files"]
    svg = (results / "figures" / "ptb-regret-vs-time.svg").read_text()
    assert svg.index("asha (n=3)") < svg.index("rs50e (n=3)") < svg.index("hb (n=3)")
    assert "T: regret vs simulated time" in svg and len(files) == 3
    code, _, err = run_cli(capsys, "plot", results, "--band-kind", "iqr")
    assert code == 2 and "iqr" in err


def _finals(rng, mean, n):
    return rng.normal(mean, 0.01, n).clip(0.001)


def test_critical_difference_matches_an_independent_computation(tmp_path, capsys):
    """Four algorithms on three benchmarks; ranks, Friedman, CD and cliques computed here by hand."""
    from scipy.stats import friedmanchisquare, studentized_range

    rng = np.random.default_rng(3)
    means = {"rs": 0.30, "re": 0.20, "tpe": 0.205, "bo": 0.10}
    finals = {}
    for benchmark in ("bert", "gpt-s", "gpt-m"):
        for algo, mean in means.items():
            values = _finals(rng, mean, 6)
            finals[benchmark, algo] = values
            for k, value in enumerate(values):
                record = trial_record(algo, k, [1.0, 2.0], [value + 0.5, float(value)], benchmark=benchmark,
                                      budget_h=10.0)
                write_trial(tmp_path / f"res-{benchmark}", record)
    ranks = []
    for benchmark in ("bert", "gpt-s", "gpt-m"):
        for k in range(6):
            row = [finals[benchmark, a][k] for a in means]
            ranks.append(np.argsort(np.argsort(row)) + 1.0)
    ranks = np.array(ranks)
    q = studentized_range.ppf(0.95, 4, np.inf) / math.sqrt(2)
    cd = q * math.sqrt(4 * 5 / (6 * 18))

    from nasbench_cli.results.critical_difference import critical_difference
    from nasbench_cli.results.files import load_many

    result = critical_difference(load_many([tmp_path / f"res-{b}" for b in ("bert", "gpt-s", "gpt-m")]).runs)
    assert result["blocks"] == 18 and result["cd"] == pytest.approx(cd)
    assert [result["mean_rank"][a] for a in means] == pytest.approx(list(ranks.mean(axis=0)))
    assert result["friedman_p"] == pytest.approx(friedmanchisquare(*ranks.T).pvalue)
    # bo first, re and tpe together (0.005 apart), rs last; every group is within the CD
    order = sorted(means, key=lambda a: result["mean_rank"][a])
    assert order[0] == "bo" and order[-1] == "rs"
    assert any({"re", "tpe"} <= set(c) for c in result["cliques"])
    for clique in result["cliques"]:
        spread = max(result["mean_rank"][a] for a in clique) - min(result["mean_rank"][a] for a in clique)
        assert spread <= cd
    code, out, err = run_cli(capsys, "plot", *[tmp_path / f"res-{b}" for b in ("bert", "gpt-s", "gpt-m")],
                             "--out", tmp_path / "figs", "--format", "png", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert str(tmp_path / "figs" / "critical-difference.png") in payload["files"]
    assert sorted(payload["critical_difference"]["labels"]) == sorted(means)


def test_critical_difference_needs_three_common_algorithms(tmp_path, capsys):
    for benchmark in ("bert", "gpt-s"):
        for algo in ("rs", "bo"):
            for k in range(3):
                write_trial(tmp_path / f"res-{benchmark}", trial_record(algo, k, [1.0], [0.1 * (k + 1)],
                                                                        benchmark=benchmark, budget_h=10.0))
    code, out, err = run_cli(capsys, "plot", tmp_path / "res-bert", tmp_path / "res-gpt-s", "--out",
                             tmp_path / "figs", "--format", "png")
    assert code == 0, err
    assert "note: no critical-difference diagram: a critical-difference diagram needs at least three" in err
    assert not (tmp_path / "figs" / "critical-difference.png").exists()


def test_a_critical_difference_diagram_over_many_tasks_keeps_a_printable_width(tmp_path):
    """Over a suite's 23 tasks the title names how many, not each (it made the figure 5,700 px wide)."""
    import struct

    import matplotlib
    matplotlib.use("Agg")
    from nasbench_cli.figures.critical_difference import cd_figure
    from nasbench_cli.figures.plotting import save_figure
    from nasbench_cli.figures.style import _rc
    from nasbench_cli.results.critical_difference import critical_difference

    rng = np.random.default_rng(0)
    runs = {f"nmt-task-{k:02d}+mo-bleu-decode_s": {label: [{"trial": t, "final_regret": float(v)}
                                                             for t, v in enumerate(rng.random(5) + shift)]
                                                     for label, shift in (("rs", 0.5), ("re", 0.2), ("tpe", 0.0))}
            for k in range(23)}
    result = critical_difference(runs)
    with _rc():                                   # the settings `plot` draws with (tight bounding box)
        [png] = save_figure(cd_figure(result), tmp_path / "cd", ["png"])
    width = struct.unpack(">I", png.read_bytes()[16:20])[0]
    assert width < 1600, width


def test_critical_difference_lines_of_one_colour_are_told_apart_by_their_markers():
    """optuna and tpe share orange, rs and st-rs black: each line carries its run's marker at its elbow."""
    import matplotlib
    matplotlib.use("Agg")
    from nasbench_cli.figures.critical_difference import cd_figure
    from nasbench_cli.figures.style import algo_style
    from nasbench_cli.results.critical_difference import critical_difference

    rng = np.random.default_rng(1)
    labels = ("optuna", "tpe", "rs", "st-rs")
    runs = {f"task-{k}": {label: [{"trial": t, "final_regret": float(v)} for t, v in enumerate(rng.random(4) + shift)]
                          for label, shift in zip(labels, (0.0, 0.1, 0.3, 0.4))} for k in range(5)}
    fig = cd_figure(critical_difference(runs))
    markers = {line.get_gid().split(":", 1)[1]: (line.get_marker(), line.get_color())
               for line in fig.axes[0].get_lines() if (line.get_gid() or "").startswith("marker:")}
    import matplotlib.pyplot as plt
    plt.close(fig)
    assert markers == {label: (algo_style(label)["marker"], algo_style(label)["color"]) for label in labels}
    assert markers["optuna"][1] == markers["tpe"][1] and markers["optuna"][0] != markers["tpe"][0]
    assert markers["rs"][1] == markers["st-rs"][1] and markers["rs"][0] != markers["st-rs"][0]
