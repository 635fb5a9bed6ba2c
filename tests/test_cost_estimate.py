"""`nasbench run` says what a run will cost before it starts: from trials already in the folder, else from
the measured table (scripts/measure_trial_cost.py), scaled to the run's budget and workers; the shipped
table covers every algorithm each benchmark serves."""
import json
import os
import sys
from pathlib import Path

import pytest

from benchmarks.core.catalog import BENCHMARKS
from benchmarks.core.errors import UserError
from nasbench_cli.harness.cost_estimate import (MEASURED, TrialCost, at_one_worker, borrowed_exponent, estimate,
                                                estimate_line, measured_as, measured_table, per_trial_seconds,
                                                worker_exponent, worth_saying)
from nasbench_cli.harness.run_description import describe_run
from nasbench_cli.harness.runner import plan_trials
from optimizers.registry import ALGORITHMS, check_benchmark, make_algorithm

import cli_process

ROOT = Path(__file__).resolve().parents[1]
TABLE = {"machine": "test CPU", "costs": {"ptb": {"rs": {"compute_s": 2.0, "budget": 1000.0, "workers": 1},
                                                  "hb": {"compute_s": 40.0, "budget": 1000.0, "workers": 1}}}}


def test_the_estimate_scales_the_measured_cost_to_budget_and_workers(tmp_path):
    run = describe_run("rs,hb,re", "ptb", trials=3, budget_hours=500, workers=4, out=tmp_path)
    todo, done = plan_trials(run)
    total, costs = estimate(run, todo, done, TABLE)
    by_label = {c.label: c.seconds for c in costs}
    assert by_label == {"rs@4w": pytest.approx(4.0), "hb@4w": pytest.approx(80.0)}   # x 0.5 budget x 4 workers
    assert total == pytest.approx(3 * (4.0 + 80.0))          # re is not in the table: left out of the total
    assert all(c.source == "measured on test CPU" for c in costs)
    line = estimate_line(total, costs, len(todo), 2)
    assert line.startswith("estimate: about 4 min of CPU for 9 trials, ~2 min on 2 processes")
    assert "hb@4w ~80 s" in line and worth_saying(total) and not worth_saying(59.0)
    broken = {"costs": {"ptb": {"rs": {"compute_s": 2.0, "budget": None}, "hb": {"budget": 1000.0}}}}
    assert estimate(run, todo, done, broken) == (0.0, [])       # a malformed entry gives no estimate, no crash


def test_measurements_at_several_worker_counts_scale_along_a_power_law(tmp_path):
    one, four = {"compute_s": 85.0, "budget": 200.0, "workers": 1}, {"compute_s": 697.0, "budget": 200.0, "workers": 4}
    entry = [one, four]                                   # DPL on wt2, first measured: 85 CPU s at one worker, 697 at four
    assert per_trial_seconds(entry, 200.0, 4) == pytest.approx(697.0)
    assert per_trial_seconds(entry, 100.0, 4) == pytest.approx(348.5)               # linear in the budget
    assert per_trial_seconds(entry, 200.0, 1) == pytest.approx(85.0)
    assert per_trial_seconds(entry, 200.0, 2) == pytest.approx((85.0 * 697.0) ** 0.5)   # between: the power law
    assert per_trial_seconds(entry, 200.0, 8) == pytest.approx(697.0 * (697.0 / 85.0) ** 0.5)
    assert per_trial_seconds(one, 200.0, 4) == pytest.approx(340.0)               # one measurement: linear
    assert at_one_worker(entry) is one and at_one_worker(four) is None and at_one_worker(None) is None
    table = {"machine": "test CPU", "costs": {"wt2": {"dpl": entry}}}
    run = describe_run("dpl", "wt2", trials=2, workers=4, out=tmp_path)
    todo, done = plan_trials(run)
    total, (cost,) = estimate(run, todo, done, table)
    assert cost.label == "dpl@4w" and cost.seconds == pytest.approx(697.0 * run.budget / 200.0)
    assert total == pytest.approx(2 * cost.seconds)
    broken = {"costs": {"wt2": {"dpl": [one, {"budget": 200.0, "workers": 4}]}}}
    assert estimate(run, todo, done, broken) == (0.0, [])


def test_a_benchmark_measured_at_one_worker_borrows_the_power_of_the_workers_from_the_others(tmp_path):
    # DyHPO measured at one and four workers on wt2 (8x) and lora-zh-en (4x), at one worker only on ptb
    wt2 = [{"compute_s": 80.0, "budget": 200.0, "workers": 1}, {"compute_s": 640.0, "budget": 200.0, "workers": 4}]
    lora = [{"compute_s": 10.0, "budget": 250.0, "workers": 1}, {"compute_s": 40.0, "budget": 250.0, "workers": 4}]
    wide = wt2 + [{"compute_s": 5120.0, "budget": 200.0, "workers": 16}]
    assert worker_exponent(wt2) == pytest.approx(1.5) and worker_exponent(lora) == pytest.approx(1.0)
    assert worker_exponent(wide) == pytest.approx(1.5) and worker_exponent(wt2[0]) is None
    assert worker_exponent([wt2[0], {"workers": 4}]) is None and worker_exponent(None) is None
    ptb = {"compute_s": 100.0, "budget": 100.0, "workers": 1}
    table = {"machine": "test CPU", "costs": {"wt2": {"dyhpo": wt2}, "lora-zh-en": {"dyhpo": lora},
                                              "lora-fr-en": {"dyhpo": wt2}, "ptb": {"dyhpo": ptb, "rs": ptb}}}
    assert borrowed_exponent(table, "dyhpo") == pytest.approx(1.5)              # median of 1.5, 1.0, 1.5
    assert borrowed_exponent(table, "rs") is None
    assert per_trial_seconds(ptb, 100.0, 4, 1.5) == pytest.approx(800.0)
    run = describe_run("dyhpo,rs", "ptb", trials=1, budget_hours=100, workers=4, out=tmp_path)
    todo, done = plan_trials(run)
    _, costs = estimate(run, todo, done, table)
    by_label = {c.label: c.seconds for c in costs}
    assert by_label == {"dyhpo@4w": pytest.approx(800.0), "rs@4w": pytest.approx(400.0)}   # rs: linear


def test_measurements_at_several_budgets_scale_along_a_power_law_in_the_budget(tmp_path):
    # DPL on ptb refits on all its results every fifth one: its cost grows faster than its budget
    short, long = {"compute_s": 40.0, "budget": 100.0, "workers": 1}, {"compute_s": 4000.0, "budget": 1000.0, "workers": 1}
    four = {"compute_s": 320.0, "budget": 100.0, "workers": 4}
    entry = [short, long, four]
    assert per_trial_seconds(entry, 100.0, 1) == pytest.approx(40.0)
    assert per_trial_seconds(entry, 1000.0, 1) == pytest.approx(4000.0)
    assert per_trial_seconds(entry, 300.0, 1) == pytest.approx(40.0 * 3.0 ** 2)            # power 2 between them
    assert per_trial_seconds(entry, 50.0, 1) == pytest.approx(10.0)                        # and beyond them
    assert per_trial_seconds(entry, 1000.0, 4) == pytest.approx(32000.0)   # four workers borrow the power 2
    assert per_trial_seconds(entry, 1000.0, 2) == pytest.approx((4000.0 * 32000.0) ** 0.5)
    assert per_trial_seconds([short, four], 1000.0, 4) == pytest.approx(3200.0)           # one budget: linear
    assert per_trial_seconds([short, dict(long, compute_s=4.0)], 500.0, 1) == pytest.approx(4.0)    # power kept >= 0
    assert at_one_worker(entry) is long and at_one_worker([four]) is None
    table = {"machine": "test CPU", "costs": {"ptb": {"dpl": entry}}}
    run = describe_run("dpl", "ptb", trials=1, budget_hours=1000, out=tmp_path)
    todo, done = plan_trials(run)
    total, (cost,) = estimate(run, todo, done, table)
    assert cost.seconds == pytest.approx(4000.0) and total == pytest.approx(4000.0)
    for broken in ([short, dict(long, budget=0.0)], [short, {"budget": 1000.0, "workers": 1}]):
        assert estimate(run, todo, done, {"costs": {"ptb": {"dpl": broken}}}) == (0.0, [])


def test_the_measuring_script_keeps_each_budget_beside_the_others(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    from measure_trial_cost import put

    costs = {"ptb": {"dpl": {"compute_s": 40.0, "budget": 100.0, "workers": 1}}}
    put(costs, "ptb", "dpl", {"compute_s": 320.0, "budget": 100.0, "workers": 4})
    put(costs, "ptb", "dpl", {"compute_s": 4000.0, "budget": 1000.0, "workers": 1})
    assert [(m["workers"], m["budget"]) for m in costs["ptb"]["dpl"]] == [(1, 100.0), (1, 1000.0), (4, 100.0)]
    put(costs, "ptb", "dpl", {"compute_s": 3900.0, "budget": 1000.0, "workers": 1})    # a re-measurement replaces
    assert [m["compute_s"] for m in costs["ptb"]["dpl"]] == [40.0, 3900.0, 320.0]


def test_the_measuring_script_keeps_each_worker_count_beside_the_others(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    from measure_trial_cost import put

    costs = {"wt2": {"dpl": {"compute_s": 85.0, "budget": 200.0, "workers": 1}}}
    put(costs, "wt2", "dpl", {"compute_s": 697.0, "budget": 200.0, "workers": 4})
    assert [m["workers"] for m in costs["wt2"]["dpl"]] == [1, 4]
    put(costs, "wt2", "dpl", {"compute_s": 80.0, "budget": 200.0, "workers": 1})     # a re-measurement replaces
    assert [m["compute_s"] for m in costs["wt2"]["dpl"]] == [80.0, 697.0]
    put(costs, "ptb", "rs", {"compute_s": 1.0, "budget": 1000.0, "workers": 1})
    assert costs["ptb"]["rs"] == {"compute_s": 1.0, "budget": 1000.0, "workers": 1}   # alone: a plain entry


def test_an_entry_measured_on_another_cpu_says_so_and_the_table_keeps_its_own(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    from measure_trial_cost import header, on_machine, put

    table = header({"machine": "AMD EPYC, 2 cores", "measured": "2026-11-28", "costs": {}}, "Intel Xeon, 2 cores")
    assert table["machine"] == "AMD EPYC, 2 cores" and table["measured"] == "2026-11-28"   # not relabelled
    put(table["costs"], "ptb", "dpl", on_machine({"compute_s": 41.0, "budget": 100.0, "workers": 1}, table,
                                                "AMD EPYC, 2 cores"))
    put(table["costs"], "ptb", "dpl", on_machine({"compute_s": 3900.0, "budget": 1000.0, "workers": 1}, table,
                                                "Intel Xeon, 2 cores"))
    short, long = table["costs"]["ptb"]["dpl"]
    assert "machine" not in short and long["machine"] == "Intel Xeon, 2 cores"
    assert header({}, "Intel Xeon, 2 cores")["machine"] == "Intel Xeon, 2 cores"   # a new table: this CPU's
    for hours, machine in ((1000, "Intel Xeon, 2 cores"), (500, "Intel Xeon, 2 cores"), (300, "AMD EPYC, 2 cores")):
        run = describe_run("dpl", "ptb", trials=1, budget_hours=hours, out=tmp_path / str(hours))
        todo, done = plan_trials(run)
        _, (cost,) = estimate(run, todo, done, table)     # the CPU of the measurement nearest in ratio
        assert cost.source == f"measured on {machine}"
    costs = [TrialCost("dpl", 3900.0, "measured on Intel Xeon, 2 cores"),
             TrialCost("hb", 0.1, "measured on AMD EPYC, 2 cores"), TrialCost("rs", 0.5, "this folder (2 trials)")]
    assert "; this folder (2 trials); measured on AMD EPYC, 2 cores and Intel Xeon, 2 cores; scaled" in \
        estimate_line(4000.5, costs, 3, 1)


def test_trials_already_in_the_folder_are_the_better_measure(tmp_path, data_dir):
    env = {**os.environ, "NASBENCH_DATA": str(data_dir), "NASBENCH_TRIAL_COST": str(tmp_path / "none.json")}
    cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", "rs", "--trials", "1",
                    "--budget-hours", "10", "--out", str(tmp_path / "r"), "--json"], check=True, env=env,
                   capture_output=True)
    run = describe_run("rs", "ptb", trials=4, budget_hours=10, out=tmp_path / "r")
    todo, done = plan_trials(run)
    measured = json.loads(done[0].read_text())["compute_s"]
    total, (cost,) = estimate(run, todo, done, TABLE)
    assert cost.source == "this folder (1 trial)" and cost.seconds == pytest.approx(measured)
    assert total == pytest.approx(3 * measured)


def test_run_prints_the_estimate_before_a_long_run_and_only_then(tmp_path, data_dir):
    table = tmp_path / "cost.json"
    table.write_text(json.dumps({"machine": "test CPU", "costs": {"ptb": {"rs": {"compute_s": 10000.0, "budget": 1000.0}}}}))
    env = {**os.environ, "NASBENCH_DATA": str(data_dir), "NASBENCH_TRIAL_COST": str(table)}
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", "rs", "--trials", "2", "--jobs", "1",
               "--budget-hours", "10"]
    long = cli_process.run(command + ["--out", str(tmp_path / "a")], capture_output=True, text=True, env=env)
    assert long.returncode == 0, long.stderr
    assert "estimate: about 3 min of CPU for 2 trials, ~3 min on 1 process (per trial: rs ~2 min; measured on " \
           "test CPU; scaled to this budget)" in long.stderr
    table.write_text(json.dumps({"machine": "test CPU", "costs": {"ptb": {"rs": {"compute_s": 1.0, "budget": 1000.0}}}}))
    short = cli_process.run(command + ["--out", str(tmp_path / "b")], capture_output=True, text=True, env=env)
    assert short.returncode == 0 and "estimate" not in short.stderr


def test_the_shipped_table_covers_every_algorithm_each_benchmark_serves():
    table = measured_table(MEASURED)
    assert table["machine"] and table["measured"]
    missing = []
    for benchmark in BENCHMARKS:
        for algo in ALGORITHMS:
            try:
                check_benchmark(algo, benchmark)
                algorithm = make_algorithm(algo, None, benchmark)
            except UserError:
                continue
            if getattr(algorithm, "multi_objective", False) and len(BENCHMARKS[benchmark].objectives) < 2:
                continue                         # no second objective to search
            settings = algorithm.settings_dict()
            if any(isinstance(settings.get(k), int) and settings[k] > BENCHMARKS[benchmark].max_epochs
                   for k in ("epochs", "max_epochs")):
                continue                         # refused there (rs50e on 28 checkpoints)
            if algo == "ftpfn":
                continue                         # runs only with FT-PFN's weights, which cannot be fetched here
            measured, _ = measured_as(benchmark, 1.0)     # nmt-*-updates: their nmt-* sibling's entry
            entry = at_one_worker(table["costs"].get(measured, {}).get(algo))
            if entry is None:
                missing.append(f"{benchmark}/{algo}")
            else:
                assert entry["compute_s"] >= 0 and 0 < entry["budget"] <= BENCHMARKS[benchmark].default_budget
    assert not missing, f"scripts/measure_trial_cost.py has not measured: {', '.join(missing)}"
