"""Commands that agree with each other and with the docs (issue: commands that agree): one line for a
bad option value, the run summary counting trials without an incumbent as `report` does, the Python
API's namespace and its "did you mean", and the command line describing every benchmark."""
import re
import sys

import pytest

import cli_process


def nasbench(*args, **kwargs):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          **kwargs)


def test_a_misspelt_benchmark_is_one_line_with_a_suggestion():
    result = nasbench("run", "--algo", "hb", "--benchmark", "ptbb")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "did you mean" in lines[0] and "ptb" in lines[0]
    missing = nasbench("run")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "--algo" in missing.stderr and "nasbench run --help" in missing.stderr


def test_the_run_summary_counts_trials_without_a_feasible_architecture_as_report_does(tmp_path):
    """hb under a tight parameter budget finds nothing feasible in some trials: the summary line says so."""
    out = tmp_path / "r"
    result = nasbench("run", "--algo", "hb", "--trials", "3", "--budget-hours", "30", "--constraint", "params<=6e6",
                      "--out", str(out))
    assert result.returncode == 0, result.stderr
    report = nasbench("report", str(out), "--json")
    import json

    row = json.loads(report.stdout)["benchmarks"]["ptb"]["algorithms"]["hb"]
    assert 0 < row["no_incumbent"] < 3          # the case: some trials found none, some did
    line = next(line for line in result.stdout.splitlines() if line.startswith("hb "))
    assert f"3 trials ({row['no_incumbent']} none)" in line, line


def test_the_api_namespace_holds_only_the_api():
    import nasbench

    public = {name for name in dir(nasbench) if not name.startswith("_")}
    assert public == set(nasbench.__all__) - {"__version__"}
    assert {"Path", "importlib", "sys"}.isdisjoint(public)


def test_the_api_suggests_a_name_for_a_misspelt_algorithm():
    import nasbench
    from benchmarks.core.errors import UserError

    with pytest.raises(UserError, match="did you mean.*hb"):
        nasbench.run("hbb", "ptb", trials=1, budget_hours=1)


def test_the_command_line_describes_every_benchmark():
    from benchmarks.core.catalog import BENCHMARKS

    top = nasbench("--help").stdout
    data = nasbench("data", "--help").stdout
    for name, spec in BENCHMARKS.items():
        assert (name.removesuffix("-updates") if spec.clock == "updates" else name) in top, name
    assert "nmt-<pair>-updates" in top and "cost-aware" in top
    assert "NAS-Bench-NLP data" not in data and "gpt" in data


@pytest.mark.parametrize("option, value", [("--constraint", ""), ("--constraint", ","), ("--objectives", ""),
                                           ("--objectives", ","), ("--objectives", " , ")])
def test_an_empty_objective_or_constraint_is_one_line_not_a_different_problem(option, value, tmp_path):
    """A CI line with an unset variable (--constraint "$BUDGET") must not gate on an unconstrained run."""
    result = nasbench("run", "--algo", "rs10e", "--trials", "1", "--budget-hours", "5", option, value,
                      "--out", str(tmp_path / "r"))
    assert result.returncode == 2, result.stdout
    assert len(result.stderr.strip().splitlines()) == 1 and option in result.stderr
    assert not (tmp_path / "r").exists()


def test_an_objective_the_benchmark_lacks_lists_its_own_objectives():
    result = nasbench("run", "--algo", "mo-rs", "--objectives", "logppl,latency")
    assert result.returncode == 2
    assert "ptb offers logppl, params, flops, epoch_s" in result.stderr
    assert "perplexity" not in result.stderr and "glue" not in result.stderr


def test_run_help_lists_every_benchmarks_objectives_and_budget_from_the_catalog():
    from benchmarks.core.catalog import BENCHMARKS

    from benchmarks.core.catalog import FAMILIES

    from benchmarks.core.catalog import FAMILY_PATTERNS, NMT_DEFAULT_BUDGET, NMT_MEDIAN_UPDATES
    from benchmarks.nmt.table import pair_of

    text = " ".join(nasbench("run", "--help").stdout.split())
    family = {member: FAMILY_PATTERNS[f] for f, members in FAMILIES.items() for member in members}
    for name, spec in BENCHMARKS.items():        # named itself, or with its family (`nmt-*`) or a list
        names = "|".join(re.escape(n) for n in (name, family.get(name, name)))
        if len(spec.objectives) > 1:
            assert re.search(rf"(^|[ ,(])({names})(, [\w*-]+)*: {re.escape(', '.join(spec.objectives))}(;|\))", text), name
        if spec.clock == "updates":              # one rule for the family, each pair's budget from its data
            assert f"nmt-*-updates the training updates of {NMT_DEFAULT_BUDGET} median systems of the pair" in text
            assert spec.default_budget == NMT_DEFAULT_BUDGET * NMT_MEDIAN_UPDATES[pair_of(name)]
        else:
            assert re.search(rf"(^|[ ,(])({names})(, [\w*-]+)* {spec.default_budget:g}\b", text), name


def test_the_fronts_legend_counts_the_true_front_as_report_does():
    """On three objectives the figure draws a 2-D projection; its legend still counts the whole true front
    (`hv_space.true_front_size`, what `report` prints) and says how many of them the projection shows."""
    import matplotlib.pyplot as plt

    import nasbench
    from nasbench_cli.figures.fronts import front_figure

    records = nasbench.run("mo-rs", "ptb", trials=1, budget_hours=5, objectives="logppl,params,epoch_s")
    size = records[0]["hv_space"]["true_front_size"]
    fig = front_figure("ptb", {"mo-rs": records})
    try:
        label = next(text.get_text() for text in fig.axes[0].get_legend().get_texts() if text.get_text().startswith("true front"))
    finally:
        plt.close(fig)
    assert label.startswith(f"true front ({size} architectures, ") and "on this projection" in label, label


def test_a_constraint_that_leaves_an_objective_constant_is_flagged(tmp_path):
    """params<=6e6 on ptb admits only cells of 5.7316e6 parameters: with params among the objectives the
    true front is flat in it. The run says so (and still runs); a non-degenerate problem gets no note."""
    degenerate = nasbench("run", "--algo", "mo-rs", "--objectives", "logppl,params,epoch_s", "--constraint",
                          "params<=6e6", "--trials", "1", "--budget-hours", "5", "--out", str(tmp_path / "a"))
    assert degenerate.returncode == 0, degenerate.stderr
    assert "degenerate in params" in degenerate.stderr and "5.7316e+06" in degenerate.stderr
    assert "degenerate in epoch_s" not in degenerate.stderr
    fine = nasbench("run", "--algo", "mo-rs", "--objectives", "logppl,params", "--trials", "1", "--budget-hours", "5",
                    "--out", str(tmp_path / "b"))
    assert fine.returncode == 0 and "degenerate" not in fine.stderr


def test_analyze_proxies_reads_the_shipped_table_and_says_what_to_build_for_the_rest(tmp_path, ptb):
    """`proxies build --metric hidden_covariance_l1` answers that the package ships those scores; `analyze
    proxies` then uses them (it once said "no scores cached" and asked for a half-hour build) and, for the
    metrics nothing scores, names the command to run and its rough cost."""
    import json
    import os

    from session_cache import seeded_cache

    env = {**os.environ, "NASBENCH_CACHE": str(seeded_cache(tmp_path / "cache"))}
    build = nasbench("proxies", "build", "--metric", "hidden_covariance_l1", "--sample", "600", "--json", env=env)
    assert build.returncode == 0, build.stderr
    result = nasbench("analyze", "proxies", "--no-ablation", "--json", env=env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["shipped_metrics"] == ["hidden_covariance_l1"]
    row = next(r for r in payload["metrics"] if r["metric"] == "hidden_covariance_l1")
    assert row["scored"] == ptb.search.n and row["population"]["tau"] < -0.3
    assert "jacobian_cosine" in payload["unscored_metrics"] and "hidden_covariance_l1" not in payload["unscored_metrics"]
    assert "nasbench proxies build --benchmark ptb --sample 1000 --split train" in payload["to_score_them"]
    assert "CPU hours" in payload["to_score_them"]


@pytest.mark.parametrize("name", ["bert", "gpt-s", "gpt-l"])
def test_space_works_on_every_benchmark_in_its_own_terms(name):
    """`space` served only recurrent cells; every space now samples, shows, validates and counts its
    architectures through the search-space protocol, in its choices."""
    import json

    from benchmarks.core.registry import load_benchmark

    drawn = nasbench("space", "sample", "-n", "3", "--seed", "1", "--benchmark", name)
    assert drawn.returncode == 0, drawn.stderr
    lines = drawn.stdout.strip().splitlines()
    assert len(lines) == 3 and lines == nasbench("space", "sample", "-n", "3", "--seed", "1", "--benchmark",
                                                 name).stdout.strip().splitlines()
    space = load_benchmark(name).search.space
    names = {choice.name for choice in space.choices()}
    for line in lines:
        assert set(json.loads(line)) <= names
        ok = nasbench("space", "validate", line, "--benchmark", name)
        assert ok.returncode == 0 and ok.stdout.startswith("valid"), ok.stderr
    bench = load_benchmark(name)
    arch_id = int(bench.search.ids[5])
    shown = json.loads(nasbench("space", "show", str(arch_id), "--benchmark", name, "--json").stdout)
    assert arch_id in shown["same_architecture_ids"] and set(shown["choices"]) <= names
    stats = json.loads(nasbench("space", "stats", "--benchmark", name, "--json").stdout)
    assert stats["architectures"] == bench.search.n and {c["name"] for c in stats["choices"]} == names
    first = stats["choices"][0]
    assert sum(first["counts"].values()) == first["active_in"] == bench.search.n
    bad = nasbench("space", "validate", json.dumps({next(iter(names)): "nonsense"}), "--benchmark", name)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_gpt_figures_list_the_algorithms_in_their_order_and_fit_their_labels(tmp_path):
    """On gpt-m the legend read re, tpe, rs (the generic names sorted last); and the y-axis label was
    taller than the axes. Now rs, re, tpe (the order of `--algo all` there), and the label fits."""
    import matplotlib.pyplot as plt

    from nasbench_cli.figures import plotting
    from nasbench_cli.results import aggregate
    from nasbench_cli.results.files import load_results

    out = tmp_path / "r"
    assert nasbench("run", "--benchmark", "gpt-m", "--algo", "tpe,re,rs", "--trials", "2", "--budget-evals", "12",
                    "--out", str(out)).returncode == 0
    per_algo = load_results(out).runs["gpt-m"]
    assert list(per_algo) == ["rs", "re", "tpe"]
    fig = plotting.regret_figure("gpt-m", per_algo, aggregate.time_grid_s([r for rs in per_algo.values() for r in rs]))
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        label = ax.yaxis.label.get_window_extent(fig.canvas.get_renderer())
        assert label.height <= ax.get_window_extent().height, (label.height, ax.get_window_extent().height)
        assert [t.get_text().split(" (n=")[0] for t in ax.get_legend().get_texts()] == ["rs", "re", "tpe"]
    finally:
        plt.close(fig)
