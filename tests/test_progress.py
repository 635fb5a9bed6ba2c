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
