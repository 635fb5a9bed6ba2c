"""`nasbench run --stop-at-best` on the real PTB data: a trial ends once its incumbent is the table's best
by validation (the LSTM at its epoch 40), and everything measured in regret is what the full trial gives."""
import sys

import numpy as np
import pytest

import cli_process
from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from nasbench_cli.harness.trial import load_features, load_scores, trial_record
from nasbench_cli.results import aggregate
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable

HOURS = 130.0       # lcbo's seed 3 is on the LSTM from 68 h, seeds 0-2 from 115-120 h (one worker)


def test_the_best_possible_incumbent_of_ptb_is_the_lstm_at_its_lowest_validation_loss(ptb):
    env = Environment(NoTestTable(ptb.search), HOURS * 3600)
    val, row, epoch = env.best_possible()
    assert int(ptb.search.ids[row]) == 1000001 and epoch == 40
    assert val == np.nanmin(ptb.search.val_loss) == ptb.search.val_loss[row, epoch - 1]


def inputs_for(ptb, algo):
    """The features and training-free scores `nasbench run` hands the algorithm (real ones)."""
    algorithm = make_algorithm(algo)
    feats = None if algorithm.feature_kind is None else load_features(ptb, algorithm.feature_kind)
    scores = None if algorithm.score_metric is None else load_scores(ptb, algorithm.score_metric,
                                                                     algorithm.score_split)
    return feats, scores


def run(ptb, algo, seed, workers, stop, hours=HOURS):
    feats, scores = inputs_for(ptb, algo)
    env = Environment(NoTestTable(ptb.search), hours * 3600)
    end = run_on(env, make_algorithm(algo), seed, feats, scores, workers, stop_at_best=stop)
    return env, end


@pytest.mark.parametrize("seed, workers", [(3, 1), (0, 1), (1, 4)])
def test_a_stopped_trial_is_the_full_trials_prefix_and_its_incumbent_never_changes_after(ptb, seed, workers):
    full, full_end = run(ptb, "lcbo", seed, workers, stop=False)
    short, short_end = run(ptb, "lcbo", seed, workers, stop=True)
    n = len(short.history.time_s)
    assert short_end.stopped_at_best and not full_end.stopped_at_best
    assert 0 < n < len(full.history.time_s)
    for field in ("time_s", "arch", "epochs", "incumbent", "incumbent_epoch", "start_s", "worker", "from_epoch"):
        assert getattr(short.history, field) == getattr(full.history, field)[:n], field
    best = short.best_possible()
    assert short.incumbent_key == best
    assert set(full.history.incumbent[n - 1:]) == {best[1]} and set(full.history.incumbent_epoch[n - 1:]) == {best[2]}
    assert full.history.incumbent[n - 2] != best[1] or full.history.incumbent_epoch[n - 2] != best[2]  # reached at n
    assert short.stopped_at_best_s == short.history.time_s[-1] == short.time_s < full.time_s
    assert full.stopped_at_best_s is None


def test_regret_at_every_time_and_the_result_file_agree_with_the_full_trial(ptb):
    """What report, plot, the anytime table and check read: the regret step function up to the budget."""
    feats, scores = inputs_for(ptb, "lcbo")
    records = [trial_record(ptb, make_algorithm("lcbo"), "lcbo", None, 3, 3, HOURS * 3600, features=feats,
                            scores=scores, stop_at_best=stop) for stop in (False, True)]
    full, short = records
    grid = np.linspace(0, HOURS * 3600, 400)
    curves = [aggregate.step_regret(*aggregate.regret_points(r), grid, r["budget_s"]) for r in records]
    np.testing.assert_array_equal(curves[0], curves[1])
    assert short["final_regret"] == full["final_regret"] and short["settings_hash"] == full["settings_hash"]
    assert "stopped_at_best_s" not in full and 60 * 3600 < short["stopped_at_best_s"] < 70 * 3600
    assert short["n_evaluations"] < full["n_evaluations"]


def test_a_trial_that_never_reaches_the_best_runs_as_without_the_option(ptb):
    full, _ = run(ptb, "rs", 0, 2, stop=False, hours=20)
    short, end = run(ptb, "rs", 0, 2, stop=True, hours=20)
    assert not end.stopped_at_best and short.stopped_at_best_s is None
    assert short.history.time_s == full.history.time_s and short.history.arch == full.history.arch


def test_it_is_refused_in_one_line_where_the_best_validation_loss_does_not_settle_the_regret():
    from nasbench_cli.harness.run_description import describe_run

    for problem in ({"objectives": "logppl,params"}, {"constraints": ("params<=6e6",)}):
        with pytest.raises(UserError, match="single-objective runs without constraints"):
            describe_run("rs", "ptb", stop_at_best=True, **problem)
    result = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", "rs", "--trials", "1",
                              "--objectives", "logppl,params", "--stop-at-best"], capture_output=True, text=True)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_stopped_and_full_trials_resume_together_and_the_report_says_which_stopped(tmp_path):
    """The option changes no regret, so it is not part of the settings hash: a folder begun with it is
    completed without it (and the reverse), and `report` counts the trials it ended early."""
    import nasbench
    from nasbench_cli.results.files import load_many
    from nasbench_cli.results.report_table import build_report, used_up_notes

    first = nasbench.run("lcbo", "ptb", trials=2, seed=3, budget_hours=HOURS, out=tmp_path, stop_at_best=True)
    both = nasbench.run("lcbo", "ptb", trials=3, seed=3, budget_hours=HOURS, out=tmp_path)
    assert both[:2] == first and "stopped_at_best_s" not in both[2]
    assert [("stopped_at_best_s" in r) for r in first] == [True, True]
    report = build_report(load_many([tmp_path]))
    row = report["benchmarks"]["ptb"]["algorithms"]["lcbo"]
    assert row["stopped_at_best"]["trials"] == 2 and row["trials"] == 3
    assert any("2 of 3 trials stopped at the table's best" in line for line in used_up_notes(report))
    table = nasbench.trials_table(tmp_path)
    assert table["stopped_at_best_s"].notna().tolist() == [True, True, False]


def test_the_command_records_it_and_says_so(tmp_path):
    import json

    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", "lcbo", "--trials", "1", "--seed", "3",
               "--budget-hours", str(HOURS), "--out", str(tmp_path), "--stop-at-best"]
    result = cli_process.run([*command, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert 60 < json.loads(result.stdout)["algorithms"]["lcbo"]["stopped_at_best_hours"][0] < 70
    again = cli_process.run(command, capture_output=True, text=True)      # resumed: nothing to run, the same note
    assert "1 of 1 trials stopped at the table's best by validation" in again.stdout + again.stderr


def test_in_a_suite_it_ends_the_single_objective_tasks_and_runs_the_others_to_their_budget(tmp_path):
    """No task is skipped over the option (a suite's aggregate would then rest on fewer tasks): the tasks
    where the best validation loss settles the regret stop there, the others run in full, with a note."""
    import json

    suite = tmp_path / "two.toml"
    suite.write_text('[[task]]\nbenchmark = "ptb"\nbudget = 60\n'
                     '[[task]]\nbenchmark = "wt2"\nbudget = 5\nobjectives = ["logppl", "params"]\n')
    result = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--suite", str(suite), "--algo", "lcbo",
                              "--trials", "1", "--seed", "4", "--out", str(tmp_path / "r"), "--stop-at-best"],
                             capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr
    assert "--stop-at-best is not used on 1 of the 2 tasks (multi-objective or constrained" in result.stderr
    stopped = json.loads((tmp_path / "r" / "ptb+budget-60" / "ptb" / "lcbo" / "trial-0.json").read_text())
    full = json.loads((tmp_path / "r" / "wt2+mo-logppl-params+budget-5" / "wt2" / "lcbo" / "trial-0.json").read_text())
    assert 30 * 3600 < stopped["stopped_at_best_s"] < 35 * 3600 and "stopped_at_best_s" not in full
