"""Suites with held-out tasks (issue 47): the shipped dev/test split, user suite files, `run --suite`,
and `report --suite`'s aggregation recomputed from the trial files."""
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import trim_mean

from benchmarks.core.catalog import BENCHMARKS
from benchmarks.core.errors import UserError
from benchmarks.core.registry import load_benchmark
from nasbench_cli.suites.definition import all_tasks, dev_benchmarks, family, load_suite, shipped

import cli_process


def cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True)


def test_dev_and_test_partition_every_task_by_the_written_rule():
    suites = shipped()
    dev, test = [t.name for t in suites["dev"].tasks], [t.name for t in suites["test"].tasks]
    assert not set(dev) & set(test)
    assert sorted(dev + test) == sorted(t.name for t in all_tasks())
    cost_aware = {name for name, spec in BENCHMARKS.items() if spec.clock == "updates"}   # nmt again, other clock
    assert len(cost_aware) == 6 and not cost_aware & {t.benchmark for s in suites.values() for t in s.tasks}
    assert {t.benchmark for t in all_tasks()} == set(BENCHMARKS) - cost_aware   # every other benchmark has tasks
    chosen = dev_benchmarks()
    assert "ptb" in chosen                                                # where the defaults were tuned
    families: dict = {}
    for name in set(BENCHMARKS) - cost_aware:
        families.setdefault(family(name), []).append(name)
    for members in families.values():                                     # one member of each family in dev
        assert len(set(members) & chosen) == (1 if len(members) > 1 else 0)
    assert len({t.name for t in suites["test"].tasks if not t.objectives}) >= 12
    assert {t.benchmark for t in suites["smoke"].tasks} <= {t.benchmark for t in suites["test"].tasks}


def test_no_constrained_task_is_degenerate():
    from nasbench_cli.harness.trial import check_problem

    for task in all_tasks():
        if task.constraints:
            benchmark = load_benchmark(task.benchmark)
            assert check_problem(benchmark, (), task.constraints) == [], task.name


def test_a_user_suite_file_and_its_mistakes(tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text('version = 2\n[[task]]\nbenchmark = "wt2"\nbudget = 30\n'
                    '[[task]]\nbenchmark = "nmt-zh-en"\nobjectives = ["bleu", "decode_s"]\n')
    suite = load_suite(str(good))
    assert suite.name == "mine" and suite.version == 2
    assert [t.name for t in suite.tasks] == ["wt2+budget-30", "nmt-zh-en+mo-bleu-decode_s"]
    bad = tmp_path / "bad.toml"
    for text, message in (('[[task]]\nbenchmark = "ptbb"\n', "unknown benchmark 'ptbb'"),
                          ('[[task]]\nbenchmark = "ptb"\nbudgett = 3\n', "task 1: unknown key 'budgett'"),
                          ('name = "x"\n', "at least one"), ("[[task]\n", "not a TOML suite file")):
        bad.write_text(text)
        with pytest.raises(UserError, match=message):
            load_suite(str(bad))
    one = tmp_path / "one.toml"
    one.write_text('[[task]]\nbenchmark = "wt2"\nobjectives = ["logppl", "params"]\n')
    shown = cli("suite", "show", one)
    assert shown.returncode == 0 and shown.stdout.splitlines()[0] == "one v1 (1 task)"     # not "one v1:  (1 tasks)"
    assert "wt2+mo-logppl-params" in shown.stdout
    done = cli("suite", "show", "tests")
    assert done.returncode == 2 and "unknown suite 'tests' (did you mean 'test'?)" in done.stderr


TASK_MISTAKES = (  # a [[task]] line after `benchmark = "ptb"`, and what the one-line refusal says
    ("workers = 0", "task 1: workers must be a whole number from 1 to 1024, got 0"),
    ("workers = -2", "got -2"), ("workers = 2.5", "got 2.5"), ('workers = "4"', "got '4'"), ("workers = true", "got True"),
    ("budget = 0", "budget must be a number > 0 (hours on ptb), got 0"), ("budget = -5", "got -5"),
    ("budget = inf", "got inf"), ('budget = "1h"', "got '1h'"), ("budget = true", "got True"),
    ('objectives = ["nope"]', "unknown objective 'nope'; ptb offers logppl"),
    ('objectives = ["params"]', "the single objective on 'ptb' is 'logppl'"),
    ('objectives = [1]', "objectives must be a list of strings"), ('objectives = [""]', "names nothing"),
    ('constraints = ["params<="]', "malformed constraint 'params<='"),
    ('constraints = ["glue>=80"]', "has no objective 'glue'"),
)


@pytest.mark.parametrize("line, message", TASK_MISTAKES, ids=[line for line, _ in TASK_MISTAKES])
def test_a_suite_file_is_checked_as_run_checks_its_options(tmp_path, line, message):
    """A task with a mistake is refused when the file is read (one line naming the file and the task), not
    skipped with a note, run with nonsense, or read character by character when it runs."""
    path = tmp_path / "mine.toml"
    path.write_text(f'[[task]]\nbenchmark = "ptb"\n{line}\n')
    with pytest.raises(UserError, match=re.escape(message)) as caught:
        load_suite(str(path))
    assert str(caught.value).startswith(f"{path}: task 1: ") and "\n" not in str(caught.value)


def test_a_suite_file_reads_text_lists_whole_counts_and_the_loss_alone_as_run_does(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[[task]]\nbenchmark = "ptb"\nobjectives = "logppl, params"\nconstraints = "flops <= 1e9"\n'
                    '[[task]]\nbenchmark = "wt2"\nobjectives = ["logppl"]\nworkers = 4\n'
                    '[[task]]\nbenchmark = "gpt-s"\nbudget = 20\n')
    tasks = load_suite(str(path)).tasks
    assert [t.name for t in tasks] == ["ptb+mo-logppl-params+flops<=1e9", "wt2+4w", "gpt-s+budget-20"]
    assert tasks[0].objectives == ("logppl", "params") and tasks[0].constraints == ("flops<=1e9",)
    assert tasks[1].kind == "single-objective"             # the loss alone is the default run, as with --objectives
    for text, message in (('[[task]]\nbenchmark = "gpt-s"\nbudget = 20.5\n',
                           "task 1: budget must be a whole number of evaluations on gpt-s, got 20.5"),
                          ('version = "a"\n[[task]]\nbenchmark = "ptb"\n', "version must be a whole number >= 1"),
                          ('name = ""\n[[task]]\nbenchmark = "ptb"\n', "name must be a non-empty string"),
                          ('[[task]]\nbenchmark = 3\n', "benchmark must be a name in quotes"),
                          ('[[task]]\nbenchmark = "ptb"\n[[task]]\nbenchmark = "ptb"\nobjectives = ["logppl"]\n',
                           "a task is listed twice (ptb)")):
        path.write_text(text)
        with pytest.raises(UserError, match=re.escape(message)):
            load_suite(str(path))


def test_run_and_report_a_suite(tmp_path):
    out = tmp_path / "r"
    done = cli("run", "--suite", "smoke", "--algo", "rs,top1e,re", "--trials", "3", "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [t["task"] for t in result["tasks"]] == [t.name for t in shipped()["smoke"].tasks]
    assert any("top1e skipped" in line and "gpt-s" in line for line in result["skipped"])   # no epochs there
    refused = cli("run", "--suite", "smoke", "--algo", "rs", "--benchmark", "ptb", "--out", out)
    assert refused.returncode == 2 and "leave out --benchmark" in refused.stderr
    report = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)
    # recompute rs's normalised regret on wt2 from its trial files
    wt2 = load_benchmark("wt2")
    best = np.where(np.isfinite(wt2.test_loss), wt2.test_loss, np.inf).min(axis=1)
    best = best[np.isfinite(best)]
    scale = np.median(best) - best.min()
    values = {}
    for task in shipped()["smoke"].tasks:
        for path in sorted((out / task.name / task.benchmark / "rs").glob("trial-*.json")):
            record = json.loads(path.read_text())
            if task.benchmark == "wt2":
                values.setdefault("wt2", []).append(record["final_regret"] / scale)
    rs = report["algorithms"]["rs"]
    assert rs["tasks"] == 4 and rs["trials"] == 12
    assert report["algorithms"]["top1e"]["tasks"] == 2                      # wt2 and lora-fr-en have epochs
    assert rs["iqm_ci95"][0] <= rs["iqm"] <= rs["iqm_ci95"][1] and rs["mean_ci95"][0] <= rs["mean"] <= rs["mean_ci95"][1]
    assert "wt2+budget-20" in report["overtuning"]
    assert any("'top1e' did not run on 2 task(s)" in note for note in report["notes"])
    assert not any("no results on" in note for note in report["notes"])    # top1e cannot run gpt-s, nmt: not missed
    from nasbench_cli.results.suite_report import normalised

    records = [json.loads(p.read_text()) for p in sorted((out / "wt2+budget-20" / "wt2" / "rs").glob("trial-*.json"))]
    assert normalised(records, wt2) == pytest.approx(values["wt2"])
    assert trim_mean(np.array([0.0, 1.0, 2.0, 3.0]), 0.25) == 1.5            # IQM: the middle half's mean
    again = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)
    assert again["algorithms"] == report["algorithms"]                     # the bootstrap is seeded
    two = json.loads(cli("report", "--suite", "smoke", out, "--algo", "rs,re", "--json").stdout)
    assert set(two["algorithms"]) == {"rs", "re"} and two["algorithms"]["rs"]["iqm"] == rs["iqm"]
    assert two["algorithms"]["rs"]["mean_rank"] + two["algorithms"]["re"]["mean_rank"] == pytest.approx(3.0)  # of two
    for refused in (cli("report", "--suite", "smoke", out, "--algo", "rs,hb"),
                    cli("report", "--suite", "smoke", out, "--benchmark", "wt2"),
                    cli("plot", "--suite", "smoke", out, "--benchmark", "wt2", "--out", tmp_path / "f")):
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "no results of hb" in cli("report", "--suite", "smoke", out, "--algo", "rs,hb").stderr
    # the probability of improvement against another algorithm than rs: P(rs < re) + P(re < rs) = 1 on each task
    versus = json.loads(cli("report", "--suite", "smoke", out, "--versus", "re", "--json").stdout)
    assert versus["versus"] == "re" and report["versus"] == "rs" and "p_improvement" not in versus["algorithms"]["re"]
    assert versus["algorithms"]["rs"]["p_improvement"] + report["algorithms"]["re"]["p_improvement"] == pytest.approx(1.0)
    assert report["algorithms"]["re"]["p_improvement"] == report["algorithms"]["re"]["p_improvement_over_rs"]
    assert versus["algorithms"]["re"]["p_improvement_over_rs"] == report["algorithms"]["re"]["p_improvement_over_rs"]
    assert "| mean rank | P(< re) |" in cli("report", "--suite", "smoke", out, "--versus", "re", "--markdown").stdout
    import nasbench                                                      # the Python API: the same dict as --json

    assert nasbench.suite_report("smoke", out, versus="re") == versus
    assert set(nasbench.suite_report("smoke", out, algos=["rs", "re"])["algorithms"]) == {"rs", "re"}
    for args, words in ((("--versus", "hbb"), "--versus hbb: no results of it under"),
                        (("--versus", "top1e", "--algo", "rs,re"), "add it to --algo"),
                        (("--versus", " "), "--versus needs an algorithm's label")):
        refused = cli("report", "--suite", "smoke", out, *args)
        assert refused.returncode == 2 and words in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    plain = cli("report", out / "wt2+budget-20", "--versus", "re")       # a plain report has no such column
    assert plain.returncode == 2 and "give --suite NAME" in plain.stderr and len(plain.stderr.strip().splitlines()) == 1
    # anytime: at 100% of the budget the table's IQM; at 30% re's trials cut there, recomputed here
    anytime = report["anytime"]
    assert anytime["fractions"][-1] == 1.0 and anytime["iqm"]["rs"][-1] == pytest.approx(rs["iqm"])
    from nasbench_cli.results.truncate import record_at

    cut = []
    for task in shipped()["smoke"].tasks:
        records = [json.loads(p.read_text()) for p in sorted((out / task.name / task.benchmark / "re").glob("trial-*.json"))]
        cut.append(normalised([record_at(r, 0.3 * r["budget_s"]) for r in records], load_benchmark(task.benchmark)))
    assert anytime["iqm"]["re"][anytime["fractions"].index(0.3)] == pytest.approx(trim_mean(np.concatenate(cut), 0.25))
    assert "anytime: IQM of normalised regret" in cli("report", "--suite", "smoke", out).stdout
    table = cli("report", "--suite", "smoke", out, "--markdown").stdout.splitlines()  # for a paper: the same figures
    assert "| algorithm | tasks | trials | IQM (95% CI) | mean (95% CI) | mean rank | P(< rs) |" in table
    assert (f"| rs | 4 | 12 | {rs['iqm']:.3f} ({rs['iqm_ci95'][0]:.3f}–{rs['iqm_ci95'][1]:.3f}) | {rs['mean']:.3f} "
            f"({rs['mean_ci95'][0]:.3f}–{rs['mean_ci95'][1]:.3f}) | {rs['mean_rank']:.2f} | – |") in table
    assert "| algorithm | 1% | 3% | 10% | 30% | 100% |" in table and any(line.startswith("- Note: ") for line in table)
    cell = report["per_task"]["wt2+budget-20"]["rs"]                       # per task: the same values, per task
    assert cell["trials"] == 3 and cell["mean"] == pytest.approx(np.mean(values["wt2"]), rel=1e-12)
    assert cell["final_regret"] == pytest.approx(np.mean(values["wt2"]) * scale, rel=1e-12) and cell["none"] == 0
    shown = cli("report", "--suite", "smoke", out, "--per-task").stdout.splitlines()
    row = next(line for line in shown if line.startswith("wt2+budget-20 "))
    assert f"{cell['mean']:.3f}" in row.split() or f"{cell['mean']:.3f}*" in row.split()
    assert "| task | " in cli("report", "--suite", "smoke", out, "--per-task", "--markdown").stdout
    # export --suite: every task's rows with a task column; the trials' normalised regret is the report's
    exported = cli("export", "--suite", "smoke", out, "--format", "csv", "--out", tmp_path / "tables", "--json")
    assert exported.returncode == 0, exported.stderr
    import pandas

    table = pandas.read_csv(tmp_path / "tables" / "trials.csv")
    assert list(table.columns[:3]) == ["task", "benchmark", "label"]
    assert sorted(table["task"].unique()) == sorted(t.name for t in shipped()["smoke"].tasks)
    pooled = table[table["label"] == "rs"]["normalised_regret"].to_numpy()
    assert len(pooled) == 12 and trim_mean(pooled, 0.25) == pytest.approx(rs["iqm"], rel=1e-12)
    assert set(pandas.read_csv(tmp_path / "tables" / "regret.csv")["task"]) == set(table["task"])
    plain = cli("report", out)                              # the suite folder read as one run's: pointed to --suite
    assert plain.returncode == 2 and "holds a suite's results (4 task folders" in plain.stderr
    assert "--suite smoke" in plain.stderr and len(plain.stderr.strip().splitlines()) == 1
    # the CI gate, task by task: a baseline per task; a task's results gone fails the gate
    baselines = tmp_path / "baselines"
    assert cli("check", "--suite", "smoke", out, "--write-baseline", baselines).returncode == 0
    assert sorted(p.stem for p in baselines.glob("*.json")) == sorted(t.name for t in shipped()["smoke"].tasks)
    passed = cli("check", "--suite", "smoke", out, "--baseline", baselines, "--allow-underpowered")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    import shutil

    shutil.rmtree(out / "wt2+budget-20")
    failed = cli("check", "--suite", "smoke", out, "--baseline", baselines, "--allow-underpowered")
    assert failed.returncode == 1 and "wt2+budget-20: a baseline but no results" in failed.stdout
    # a task where an algorithm has fewer trials than on its others is named (its pooled figures weigh it less)
    assert not any("fewer trials" in note for note in report["notes"])
    task = next(t for t in shipped()["smoke"].tasks if t.benchmark.startswith("lora"))
    sorted((out / task.name / task.benchmark / "re").glob("trial-*.json"))[-1].unlink()
    uneven = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)["notes"]
    assert [note for note in uneven if "fewer trials" in note] == [
        f"'re' has fewer trials on 1 task(s) than the 3 of its others (2 on {task.name}): its figures weigh those "
        "tasks less; complete them by running the suite again with --trials 3 (finished trials are kept)"]
    plotted = cli("plot", "--suite", "smoke", out, "--out", tmp_path / "figures", "--format", "png", "--json")
    assert plotted.returncode == 0, plotted.stderr
    plotted = json.loads(plotted.stdout)                    # the figures, and the same notes as the report
    assert [Path(f).name for f in plotted["files"]][:1] == ["smoke-iqm.png"] and plotted["notes"] == uneven
    assert all(Path(f).stat().st_size > 10_000 for f in plotted["files"])
    # an algorithm missing from a task it can run is named: its pooled figures are over fewer tasks
    nmt = next(t for t in shipped()["smoke"].tasks if t.benchmark.startswith("nmt"))
    shutil.rmtree(out / nmt.name / nmt.benchmark / "re")
    absent = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)
    assert absent["algorithms"]["re"]["tasks"] == 2
    assert [note for note in absent["notes"] if "no results on" in note] == [
        f"'re' has no results on 1 task(s) it can run ({nmt.name}): its IQM, mean and mean rank are over the 2 it "
        f"ran, not comparable with those of algorithms that ran more; run `nasbench run --suite smoke --algo re "
        f"--trials 3 --out {out}` (finished trials are kept)"]


def test_the_aggregate_figure_counts_tasks_in_words():
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    from nasbench_cli.figures.suite import aggregate_figure

    row = {"iqm": 0.1, "iqm_ci95": [0.05, 0.2], "mean": 0.1, "mean_ci95": [0.05, 0.2]}
    data = {"suite": "mine", "version": 1, "tasks": ["a", "b", "c"],
            "algorithms": {"rs": {**row, "tasks": 3}, "my-algo": {**row, "iqm": 0.2, "tasks": 1}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # two algorithms once left no room for the title ("Tight layout not applied")
        fig = aggregate_figure(data)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["my-algo (1 task)", "rs (3 tasks)"]


def test_a_suite_report_scores_multi_objective_tasks_by_the_chosen_indicator(tmp_path):
    """`report --suite --indicator`: a multi-objective task's normalised regret is the indicator's final
    value over its value with no front (HV regret / true HV for hv); single-objective tasks do not move."""
    from nasbench_cli.results.indicators import final_indicators
    from nasbench_cli.results.suite_report import NORMALISATIONS

    suite = tmp_path / "two.toml"
    suite.write_text('[[task]]\nbenchmark = "wt2"\nbudget = 10\n'
                     '[[task]]\nbenchmark = "wt2"\nobjectives = ["logppl", "params"]\nbudget = 10\n')
    out = tmp_path / "r"
    done = cli("run", "--suite", suite, "--algo", "rs", "--trials", "4", "--out", out)
    assert done.returncode == 0, done.stderr
    wt2 = load_benchmark("wt2")
    records = [json.loads(p.read_text()) for p in sorted((out / "wt2+mo-logppl-params+budget-10" / "wt2" / "rs").glob("trial-*.json"))]
    single = json.loads(cli("report", "--suite", suite, out, "--json", "--indicator", "hv").stdout)
    assert single["indicator"] == "hv" and "HV regret / true HV" in single["normalisation"]
    for name, nothing in (("hv-range", None), ("igd+", np.sqrt(2))):
        data = json.loads(cli("report", "--suite", suite, out, "--json", "--indicator", name).stdout)
        finals = np.array([final_indicators(r, wt2)[name] for r in records])
        if nothing is None:                 # hv-range's value with no front is the true front's HV there
            from nasbench_cli.results.suite_report import nothing_found

            nothing = nothing_found({**records[0], "indicator": name}, wt2)
        assert 0 <= finals.min() and finals.max() <= nothing
        single_task = cli("report", "--suite", suite, out, "--json", "--indicator", name, "--algo", "rs").stdout
        assert data["indicator"] == name and data["normalisation"].endswith(f"multi-objective: {NORMALISATIONS[name]}")
        assert data["algorithms"]["rs"]["trials"] == 8 and json.loads(single_task)["algorithms"] == data["algorithms"]
        hv_values = np.array([r["final_regret"] / r["hv_space"]["true_hv"] for r in records])
        # the pooled mean moves by exactly the change of the multi-objective task's mean (4 of the 8 values)
        assert data["algorithms"]["rs"]["mean"] - single["algorithms"]["rs"]["mean"] == pytest.approx(
            (finals / nothing - hv_values).sum() / 8, abs=1e-12)
    shown = cli("report", "--suite", suite, out, "--indicator", "igd+").stdout
    assert "multi-objective: IGD+ / sqrt(objectives)" in shown.splitlines()[0]
    # trials in a task's folder that were not run as the task says are refused, not aggregated as the suite's
    other = cli("run", "--benchmark", "wt2", "--algo", "re", "--budget-hours", "5", "--trials", "1",
                "--out", out / "wt2+budget-10")
    assert other.returncode == 0, other.stderr
    refused = cli("report", "--suite", suite, out)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert ("its trials ran with a budget of 5 hours, but the suite's task wt2+budget-10 has a budget of 10 hours"
            in refused.stderr)
    assert "has a budget of 10 hours" in cli("export", "--suite", suite, out, "--out", tmp_path / "t").stderr


def test_a_suite_run_refuses_an_algorithm_that_no_task_can_run(tmp_path):
    """A misspelt algorithm, or one no task can serve, is refused before anything runs (exit 2, one line):
    it used to be skipped on every task with a note, and the run exited 0."""
    for algo, message in (("rs,hbb", "'hbb' can run on none of the 4 tasks of suite 'smoke'; on wt2+budget-20: "
                                     "unknown algorithm hbb (did you mean 'hb'"),
                          ("mo-rs", "'mo-rs' can run on none of the 4 tasks of suite 'smoke'; on wt2+budget-20: "
                                    "'mo-rs' is a multi-objective algorithm")):
        done = cli("run", "--suite", "smoke", "--algo", algo, "--trials", "1", "--out", tmp_path / "r")
        assert done.returncode == 2 and message in done.stderr and done.stderr.count("error:") == 1, done.stderr
        assert not (tmp_path / "r").exists()


def test_a_plugin_missing_from_a_task_is_named_by_its_file_and_unknown_ones_for_every_task(tmp_path):
    """`report --suite` names the tasks a plugin can run but has no results on, by the file its results
    record (the command it prints runs it); once that file is gone it cannot tell which tasks the plugin
    could run, so it names every task it lacks and says why."""
    import shutil

    plugin = tmp_path / "my_search.py"
    source = (Path(__file__).parents[1] / "examples" / "local_search.py").read_text()
    plugin.write_text(source.replace('name = "local-search"', 'name = "local-search-with-restarts"'))
    out = tmp_path / "r"
    done = cli("run", "--suite", "smoke", "--algo", f"{plugin}:LocalSearch,rs", "--trials", "1", "--out", out)
    assert done.returncode == 0, done.stderr
    # a label longer than the column keeps the table's columns (each row's figures under their titles)
    table = cli("report", "--suite", "smoke", out, "--per-task").stdout.splitlines()
    header = next(line for line in table if line.startswith("algorithm "))
    end = header.index("tasks") + len("tasks")
    for line in table[table.index(header) + 1:table.index(header) + 3]:       # the task counts end under "tasks"
        assert line[:end].split()[-1] == "4" and line[end] == " ", (header, line)
    titles = next(line for line in table if line.startswith("task "))
    assert all(len(line) == len(titles) for line in table[table.index(titles) + 1:table.index(titles) + 5])
    nmt = next(t for t in shipped()["smoke"].tasks if t.benchmark.startswith("nmt"))
    shutil.rmtree(out / nmt.name / nmt.benchmark / "local-search-with-restarts")
    notes = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)["notes"]
    assert [note for note in notes if "no results on" in note] == [
        f"'local-search-with-restarts' has no results on 1 task(s) it can run ({nmt.name}): its IQM, mean and mean rank are over "
        f"the 3 it ran, not comparable with those of algorithms that ran more; run `nasbench run --suite smoke --algo "
        f"{plugin}:LocalSearch --trials 1 --out {out}` (finished trials are kept)"]
    plugin.unlink()
    notes = json.loads(cli("report", "--suite", "smoke", out, "--json").stdout)["notes"]
    assert [note for note in notes if "no results on" in note] == [
        f"'local-search-with-restarts' has no results on 1 task(s) others ran ({nmt.name}; whether it can run them is unknown: "
        f"{plugin}:LocalSearch cannot be loaded here): its IQM, mean and mean rank are over the 3 it ran, not comparable with those "
        f"of algorithms that ran more; run `nasbench run --suite smoke --algo {plugin}:LocalSearch --trials 1 --out "
        f"{out}` (finished trials are kept)"]
