"""`nasbench plot`: three figures x two formats from a tiny results folder."""
import json

import numpy as np
import pytest

from nasbench_cli.main import cli
from nasbench_cli.results.record import settings_hash


def trial_record(algo, trial, times_h, regrets, benchmark="ptb", budget_h=100.0, settings=None):
    """A complete, schema-valid trial record with a hand-made trajectory."""
    n = len(times_h)
    final = next((r for r in reversed(regrets) if r is not None), None)
    return {
        "format": "nasbench-trial/1", "benchmark": benchmark, "algo": algo, "trial": trial, "seed": trial,
        "budget_s": budget_h * 3600.0, "settings": settings or {},
        "settings_hash": settings_hash(benchmark, algo, settings or {}, budget_h * 3600.0),
        "versions": {}, "data_checksum": "abc", "l_star": 4.36, "best_arch": 1000001,
        "n_evaluations": n, "simulated_time_s": times_h[-1] * 3600.0, "final_regret": final,
        "compute_s": 0.01, "wall_s": 0.02,
        "trajectory": {"time_s": [t * 3600.0 for t in times_h], "regret": list(regrets),
                       "incumbent": [None if r is None else 1000 + i for i, r in enumerate(regrets)],
                       "incumbent_epoch": [None if r is None else 50 for r in regrets],
                       "arch": [1000 + i for i in range(n)], "epochs": [50] * n},
    }


def write_trial(root, record):
    path = root / record["benchmark"] / record["algo"] / f"trial-{record['trial']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def tiny_results(root):
    """rs50e and hb with 3 trials each, my-algo (not in the registry) with a single trial, plus junk."""
    rng = np.random.default_rng(0)
    for algo, scale in (("rs50e", 1.0), ("hb", 0.5)):
        for k in range(3):
            times = np.sort(rng.uniform(0.5, 90, 8)).tolist()
            regrets = [None] + np.minimum.accumulate(rng.uniform(0.05, 1.5, 7) * scale).tolist()
            write_trial(root, trial_record(algo, k, times, regrets))
    write_trial(root, trial_record("my-algo", 0, [1.0, 10.0, 50.0], [0.8, 0.3, 0.0]))   # regret 0: drawn at the floor
    (root / "ptb" / "hb" / ".trial-7.json.x1y2.tmp").write_text("{partial")
    (root / "ptb" / "hb" / "notes.txt").write_text("junk")
    return root


def run_cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        cli(list(map(str, args)))
    captured = capsys.readouterr()
    return exc.value.code, captured.out, captured.err


def test_plot_writes_three_figures_in_two_formats(tmp_path, capsys):
    from PIL import Image

    from nasbench_cli.results.files import load_results

    results = tiny_results(tmp_path / "res")
    code, out, err = run_cli(capsys, "plot", results, "--format", "png,pdf")
    assert code == 0, err
    fig_dir = results / "figures"                      # the default --out
    names = sorted(p.name for p in fig_dir.iterdir())
    assert names == sorted(f"ptb-{kind}.{fmt}" for kind in ("regret-vs-time", "final-regret-cdf", "mean-rank")
                           for fmt in ("png", "pdf"))
    assert sorted(out.split()) == sorted(str(fig_dir / n) for n in names)   # every file is printed
    for name in names:
        data = (fig_dir / name).read_bytes()
        assert data.startswith(b"\x89PNG" if name.endswith(".png") else b"%PDF")
    dpi = Image.open(fig_dir / "ptb-regret-vs-time.png").info["dpi"]
    assert dpi == pytest.approx((150, 150), abs=0.5)
    # the figures folder inside the results folder is not mistaken for results; junk is ignored
    loaded = load_results(results)
    assert loaded.benchmarks == ["ptb"] and loaded.algos("ptb") == ["rs50e", "hb", "my-algo"]
    assert [r["trial"] for r in loaded.trials("ptb", "hb")] == [0, 1, 2]
    assert load_results(results, ["ptb"], ["my-algo", "hb"]).algos("ptb") == ["hb", "my-algo"]


@pytest.mark.parametrize("args, message", [
    (["--format", "gif"], "unknown figure format gif"),
    (["--algo", "bo10d"], "no results for algorithm 'bo10d'"),
    (["--benchmark", "wt2"], "no results for benchmark"),
])
def test_user_mistakes_exit_2_with_one_line(tmp_path, capsys, args, message):
    results = tiny_results(tmp_path / "res")
    code, _, err = run_cli(capsys, "plot", results, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_same_style_per_algorithm_in_every_figure_and_no_band_for_one_trial(tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    from nasbench_cli.figures import plotting
    from nasbench_cli.figures.style import algo_style
    from nasbench_cli.results import aggregate
    from nasbench_cli.results.files import load_results

    per_algo = load_results(tiny_results(tmp_path / "res")).runs["ptb"]
    grid = aggregate.time_grid_s([r for rs in per_algo.values() for r in rs])
    figures = [plotting.regret_figure("ptb", per_algo, grid), plotting.cdf_figure("ptb", per_algo),
               plotting.rank_figure("ptb", per_algo, grid)]
    try:
        for fig in figures:
            styles = {line.get_label(): (line.get_color(), line.get_linestyle())
                      for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")}
            for algo in per_algo:
                label = f"{algo} (n={len(per_algo[algo])})"
                assert label in styles, (label, styles)
                style = algo_style(algo)
                assert styles[label][0].lower() == style["color"].lower()
        # the regret figure shades a band for rs50e and hb, none for the single my-algo trial
        colours = {tuple(np.round(c.get_facecolor()[0][:3], 3)) for c in figures[0].axes[0].collections
                   if isinstance(c, PolyCollection)}
        from matplotlib.colors import to_rgb
        assert {tuple(np.round(to_rgb(algo_style(a)["color"]), 3)) for a in ("rs50e", "hb")} <= colours
        assert tuple(np.round(to_rgb(algo_style("my-algo")["color"]), 3)) not in colours
        # log axes with the floor stated in the label
        ax = figures[0].axes[0]
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert "hours" in ax.get_xlabel() and "drawn at 0.001" in ax.get_ylabel()
    finally:
        for fig in figures:
            plt.close(fig)


def test_algo_styles_are_distinct_for_the_registry():
    from nasbench_cli.figures.style import _OTHER_MARKERS, PALETTE, algo_style
    from optimizers.registry import ALGORITHMS, MULTI_OBJECTIVE_ALGORITHMS, PAPER_ALGORITHMS

    styles = [(algo_style(a)["color"], algo_style(a)["marker"]) for a in ALGORITHMS]
    assert len(set(styles)) == len(styles)                      # colour and marker: unique per algorithm
    # every registry algorithm has its own fixed style, never a hashed one (mobster and hypertune once
    # hashed to the same orange, side by side in the learning-curve showdown's figures)
    assert not [a for a in ALGORITHMS if algo_style(a)["marker"] in _OTHER_MARKERS]
    learning_curve_showdown = ("lcbo", "dpl", "dyhpo", "ftpfn", "mobster", "hypertune", "asha", "hb", "top1e", "rs",
                               "st-kde")
    for group in (PAPER_ALGORITHMS, MULTI_OBJECTIVE_ALGORITHMS, learning_curve_showdown):   # distinct colours
        assert len({algo_style(a)["color"] for a in group}) == len(group)
    assert {algo_style(a)["color"] for a in ALGORITHMS} <= set(PALETTE.values())
    # anything else (a plugin, a --label) is stable and never drawn like a registry algorithm
    for name in ("my-algo", "myls", "lcbo-no-model", "hb+eta-4", "x" * 40):
        assert algo_style(name) == algo_style(name)
        assert (algo_style(name)["color"], algo_style(name)["marker"]) not in styles
    assert algo_style("hb@4w")["color"] == algo_style("hb")["color"] != algo_style("asha")["color"]
    assert algo_style("hb@4w")["linestyle"] != algo_style("hb")["linestyle"]
