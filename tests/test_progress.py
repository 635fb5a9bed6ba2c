"""Progress on long work: the packed-cache build reports as it reads logs; a long trial reports from its worker."""
import numpy as np

from benchmarks.core import progress
from nasbench_cli.harness import trial_progress


def test_the_packed_cache_build_reports_its_steps(data_dir, tmp_path, monkeypatch):
    from benchmarks.core.registry import load_benchmark

    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path))
    steps = []
    progress.install(lambda what, done, total: steps.append((what, done, total)))
    try:
        load_benchmark("wt2", data_dir, rebuild_cache=True)
    finally:
        progress.install(None)
    assert steps and all("345 training logs" in what for what, _, _ in steps)
    done = [d for _, d, _ in steps]
    assert done == sorted(done) and steps[-1][1:] == (345, 345) and len(steps) >= 2


def test_a_trial_reports_how_far_it_is_to_the_parent(tmp_path, ptb):
    from nasbench_cli.harness.run_description import describe_run
    from nasbench_cli.harness.runner import execute, plan_trials

    run = describe_run(["bo10d"], "ptb", trials=2, budget_hours=150, out=tmp_path)   # a few seconds each
    todo, _ = plan_trials(run)
    heard = []
    summaries, errors = execute(todo, 2, on_progress=lambda shares: heard.append(dict(shares)))
    assert not errors and len(summaries) == 2
    reports = [value for shares in heard for value in shares.values()]
    assert reports, "no progress was reported during two trials of a few seconds each"
    shares = np.array([share for share, _ in reports])
    assert ((shares > 0) & (shares <= 1)).all() and all(jobs >= 1 for _, jobs in reports)
    # the progress files were in a temporary folder of their own, now gone; none is in the results
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and "trial-" not in p.name and p.name[0] != "."]


def test_reporter_throttles_and_reads_back(tmp_path):
    path = tmp_path / "p"
    with trial_progress.reporting_to(path):
        report = trial_progress.current()
        report(3600.0, 7200.0, 12)
        report(7000.0, 7200.0, 99)            # within EVERY_S of the first: not written
    assert trial_progress.current() is None
    assert trial_progress.read(path) == (0.5, 12)
    assert trial_progress.read(tmp_path / "missing") is None


def test_without_a_terminal_a_long_trial_is_a_log_line_while_it_runs(tmp_path, data_dir, monkeypatch):
    """Under nohup or CI a trial of an hour printed nothing until it ended: now a line on the running
    trials (share of the budget simulated, jobs so far) when no line was written for a while."""
    import re

    from click.testing import CliRunner

    from nasbench_cli.commands import run as run_command
    from nasbench_cli.main import group

    monkeypatch.setattr(run_command, "LOG_RUNNING_EVERY_S", 0.5)      # the product waits a minute
    result = CliRunner().invoke(group, ["run", "--algo", "bo10d", "--trials", "1", "--budget-hours", "150",
                                        "--jobs", "1", "--data-dir", str(data_dir), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    running = re.findall(r"^ptb trials 0/1 \[0:00:\d\d\] running: bo10d #0 (\d+)% \((\d+) jobs\)$", result.output,
                         re.MULTILINE)
    assert running, result.output
    shares = [int(share) for share, _ in running]
    assert shares == sorted(shares) and all(0 <= share <= 100 for share in shares)
    assert re.search(r"^ptb trials 1/1 \[0:00:\d\d\] bo10d #0: regret \d\.\d{4}, ", result.output, re.MULTILINE)


def test_without_a_terminal_a_running_line_does_not_hold_back_a_finished_trials_line():
    """A 1000-h run under nohup (trials of 6-8 minutes, a running line every minute) showed 4 of its first 6
    finished trials: a running line written in the 10 s before a trial ended swallowed that trial's line.
    Finished lines are now spaced among themselves only."""
    from nasbench_cli.commands.run import LOG_EVERY_S, LOG_RUNNING_EVERY_S, LogPace

    pace = LogPace(0.0)
    assert pace.finished_due(396.0, always=True)                          # the first trial
    assert not pace.running_due(396.0 + LOG_RUNNING_EVERY_S - 1)          # a line was written a minute ago
    assert pace.running_due(517.0)
    assert pace.finished_due(520.0)                                       # 3 s after the running line
    assert not pace.running_due(521.0)                                    # nor a running line right after it
    assert not pace.finished_due(520.0 + LOG_EVERY_S / 2)                 # two trials in quick succession
    assert pace.finished_due(520.0 + LOG_EVERY_S / 2, always=True)        # ... unless it is the last
    assert pace.finished_due(520.0 + LOG_EVERY_S * 1.5 + 0.1)


def test_the_running_line_names_a_few_trials_and_counts_the_rest():
    from collections import namedtuple

    from nasbench_cli.commands.run import running_line

    spec = namedtuple("Spec", "label algo trial")
    specs = [spec("dyhpo", "dyhpo", k) for k in range(5)]
    shares = {spec: (0.1 * k, 100 * k) for k, spec in enumerate(specs)}
    assert running_line(shares) == "dyhpo #0 0% (0 jobs), dyhpo #1 10% (100 jobs), dyhpo #2 20% (200 jobs) and 2 more"
    assert running_line(dict(list(shares.items())[:2]), limit=2) == "dyhpo #0 0% (0 jobs), dyhpo #1 10% (100 jobs)"
