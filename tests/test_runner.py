"""`nasbench run`: result files, resume, refusal of other settings, jobs-invariance, interruption."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import cli_process

BUDGET_H = "150"


def nasbench(*args, **kwargs):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          **kwargs)


def trajectories(out, algo, trials):
    return [json.loads((out / "ptb" / algo / f"trial-{k}.json").read_text())["trajectory"] for k in range(trials)]


@pytest.fixture(scope="module")
def jobs1(tmp_path_factory, ptb):
    out = tmp_path_factory.mktemp("jobs1")
    result = nasbench("run", "--algo", "rs10e,hb", "--trials", "3", "--budget-hours", BUDGET_H, "--jobs", "1",
                      "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    return out, json.loads(result.stdout)


def test_result_files_are_complete_and_self_describing(jobs1, ptb):
    out, summary = jobs1
    assert summary["ran"] == 6 and summary["skipped"] == 0
    record = json.loads((out / "ptb" / "hb" / "trial-2.json").read_text())
    for key in ("benchmark", "algo", "trial", "seed", "budget_s", "settings", "versions", "trajectory",
                "final_regret", "compute_s"):
        assert key in record
    assert record["seed"] == 2 and record["budget_s"] == float(BUDGET_H) * 3600
    assert record["settings"]["eta"] == 3
    from importlib.metadata import PackageNotFoundError, version

    from nasbench_cli.results.record import VERSIONED

    installed = {}
    for package in VERSIONED:          # every library a result can depend on, the searchers' own included
        try:
            installed[package] = version(package)
        except PackageNotFoundError:
            pass
    assert record["versions"] == installed and {"numpy", "optuna", "syne-tune"} <= set(installed)
    traj = record["trajectory"]
    n = len(traj["time_s"])
    assert n > 10 and all(len(v) == n for v in traj.values())
    assert traj["time_s"][-1] <= record["budget_s"]
    assert record["final_regret"] == traj["regret"][-1]
    row = ptb.search.index_of(traj["incumbent"][-1])
    assert record["final_regret"] == pytest.approx(ptb.test_loss[row, traj["incumbent_epoch"][-1] - 1] - ptb.l_star)


def test_jobs_1_and_jobs_2_give_identical_trajectories(jobs1, tmp_path):
    out1, _ = jobs1
    result = nasbench("run", "--algo", "rs10e,hb", "--trials", "3", "--budget-hours", BUDGET_H, "--jobs", "2",
                      "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for algo in ("rs10e", "hb"):
        for k in range(3):
            a = json.loads((out1 / "ptb" / algo / f"trial-{k}.json").read_text())["trajectory"]
            b = json.loads((tmp_path / "ptb" / algo / f"trial-{k}.json").read_text())["trajectory"]
            assert json.dumps(a) == json.dumps(b)


def test_rerun_does_nothing_and_other_settings_are_refused(jobs1):
    out, _ = jobs1
    before = {p: p.stat().st_mtime_ns for p in out.rglob("trial-*.json")}
    again = nasbench("run", "--algo", "rs10e,hb", "--trials", "3", "--budget-hours", BUDGET_H, "--out", str(out),
                     "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["ran"] == 0
    assert before == {p: p.stat().st_mtime_ns for p in out.rglob("trial-*.json")}
    refused = nasbench("run", "--algo", "hb", "--trials", "3", "--budget-hours", BUDGET_H, "--out", str(out),
                       "--set", "eta=4", "--label", "hb")     # without --label it would be its own run, hb+eta-4
    assert refused.returncode == 2 and "made with other settings" in refused.stderr
    assert "eta 3 there, 4 now" in refused.stderr                    # which setting differs, and how
    refused = nasbench("run", "--algo", "hb", "--trials", "3", "--budget-hours", "99", "--out", str(out))
    assert refused.returncode == 2 and "budget 150 h there, 99 h now" in refused.stderr


def test_bad_setting_is_a_one_line_error(tmp_path):
    result = nasbench("run", "--algo", "hb", "--trials", "1", "--out", str(tmp_path), "--set", "nosuch=1")
    assert result.returncode == 2 and "no selected algorithm has a setting 'nosuch'" in result.stderr
    result = nasbench("run", "--algo", "hb", "--trials", "1", "--out", str(tmp_path), "--set", "eta=three")
    assert result.returncode == 2 and "expects a 64-bit integer" in result.stderr


def test_killed_run_resumes_to_the_same_results(jobs1, tmp_path):
    out1, _ = jobs1
    args = ["run", "--algo", "rs10e,hb", "--trials", "3", "--budget-hours", BUDGET_H, "--jobs", "1",
            "--out", str(tmp_path)]
    proc = subprocess.Popen([sys.executable, "-m", "nasbench_cli.main", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(tmp_path.rglob("trial-*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for path in tmp_path.rglob("trial-*.json"):   # only complete files survive a kill
        json.loads(path.read_text())
    resumed = nasbench(*args, "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["skipped"] >= 2
    assert not list(tmp_path.rglob("*.tmp"))
    for algo in ("rs10e", "hb"):
        assert json.dumps(trajectories(tmp_path, algo, 3)) == json.dumps(trajectories(out1, algo, 3))


# -- simulated workers through the CLI ------------------------------------------------------------

WORKER_ALGOS = "asha,ahb,hb,rs50e,re,bo10d"


def worker_records(out, label, trials=2):
    return [json.loads((out / "ptb" / label / f"trial-{k}.json").read_text()) for k in range(trials)]


def comparable(record):
    return json.dumps({k: v for k, v in record.items() if k not in ("compute_s", "wall_s", "versions")})


@pytest.fixture(scope="module")
def workers4(tmp_path_factory, ptb):
    out = tmp_path_factory.mktemp("workers4")
    args = ["run", "--algo", WORKER_ALGOS, "--workers", "4", "--trials", "2", "--budget-hours", "60",
            "--out", str(out)]
    result = nasbench(*args, "--jobs", "1", "--json")
    assert result.returncode == 0, result.stderr
    return out, args, json.loads(result.stdout)


def test_workers_runs_are_labelled_and_record_their_jobs(workers4):
    out, _, summary = workers4
    assert summary["workers"] == 4 and summary["ran"] == 12
    assert set(summary["algorithms"]) == {f"{a}@4w" for a in WORKER_ALGOS.split(",")}
    for label in summary["algorithms"]:
        for record in worker_records(out, label):
            assert record["workers"] == 4 and record["label"] == label
            jobs, traj = record["jobs"], record["trajectory"]
            assert len(jobs["start_s"]) == len(traj["time_s"]) and set(jobs["worker"]) == {0, 1, 2, 3}
            assert all(s <= e for s, e in zip(jobs["start_s"], traj["time_s"]))


def test_workers_runs_are_jobs_invariant_and_resume_after_a_kill(workers4, tmp_path):
    out, args, _ = workers4
    args = [a if a != str(out) else str(tmp_path) for a in args]
    proc = subprocess.Popen([sys.executable, "-m", "nasbench_cli.main", *args, "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list(tmp_path.rglob("trial-*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = nasbench(*args, "--jobs", "2", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["skipped"] >= 3
    for algo in WORKER_ALGOS.split(","):
        for a, b in zip(worker_records(out, f"{algo}@4w"), worker_records(tmp_path, f"{algo}@4w")):
            assert comparable(a) == comparable(b)


def test_one_worker_and_four_workers_live_side_by_side_and_are_compared(workers4, tmp_path):
    out, _, _ = workers4
    one = nasbench("run", "--algo", "asha", "--trials", "2", "--budget-hours", "60", "--out", str(out), "--json")
    assert one.returncode == 0, one.stderr
    assert (out / "ptb" / "asha" / "trial-0.json").is_file()
    report = nasbench("report", str(out), "--json")
    assert report.returncode == 0, report.stderr
    assert {"asha", "asha@4w", "hb@4w"} <= set(json.dumps(json.loads(report.stdout)).replace('"', " ").split())
    figures = nasbench("plot", str(out), "--out", str(tmp_path), "--format", "png", "--json")
    assert figures.returncode == 0, figures.stderr
    names = {p.split("/")[-1] for p in json.loads(figures.stdout)["files"]}
    assert {"ptb-regret-by-workers.png", "ptb-worker-utilisation.png", "ptb-regret-vs-time.png"} <= names


def test_a_folder_made_from_other_data_is_refused(jobs1, tmp_path):
    import shutil

    out1, _ = jobs1
    shutil.copytree(out1 / "ptb" / "hb", tmp_path / "ptb" / "hb")
    path = tmp_path / "ptb" / "hb" / "trial-0.json"
    record = json.loads(path.read_text())
    record["data_checksum"] = "0" * 64                         # as if run on other logs
    path.write_text(json.dumps(record))
    refused = nasbench("run", "--algo", "hb", "--trials", "3", "--budget-hours", BUDGET_H, "--out", str(tmp_path))
    assert refused.returncode == 2 and "made from other data" in refused.stderr


def test_only_canonical_trial_file_names_count(jobs1, tmp_path):
    import shutil

    out1, _ = jobs1
    shutil.copytree(out1 / "ptb" / "hb", tmp_path / "ptb" / "hb")
    shutil.copy(tmp_path / "ptb" / "hb" / "trial-1.json", tmp_path / "ptb" / "hb" / "trial-01.json")
    report = nasbench("report", str(tmp_path), "--json")
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["benchmarks"]["ptb"]["algorithms"]["hb"]["trials"] == 3


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(final_regret=-0.5), "final_regret differs"),
    (lambda r: r["trajectory"]["regret"].__setitem__(-1, -0.1), "negative value"),
    (lambda r: r.update(final_regret=r["final_regret"] + 0.01), "final_regret differs"),
    (lambda r: r["settings"].update(eta=4), "settings_hash does not match"),
    (lambda r: r.update(budget_s=r["budget_s"] * 2), "settings_hash does not match"),
    (lambda r: r.update(compute_s="fast"), "compute_s is not"),
    (lambda r: r.update(label="hb@4w"), "but lies in"),
])
def test_hand_edited_result_files_are_refused_in_one_line(jobs1, tmp_path, edit, message):
    import shutil

    out1, _ = jobs1
    shutil.copytree(out1 / "ptb" / "hb", tmp_path / "ptb" / "hb")
    path = tmp_path / "ptb" / "hb" / "trial-2.json"
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))
    for command in (["report", str(tmp_path)], ["plot", str(tmp_path), "--out", str(tmp_path / "figs")]):
        result = nasbench(*command)
        assert result.returncode == 2, result.stdout
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("hours", ["nan", "inf"])
def test_non_finite_budget_is_refused_before_any_trial(tmp_path, hours):
    result = nasbench("run", "--algo", "hb", "--trials", "1", "--budget-hours", hours, "--out", str(tmp_path))
    assert result.returncode == 2 and "must be a finite number" in result.stderr
    assert not (tmp_path / "ptb").exists()


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "--seed"),
    (["--set", "bo10d.beta=nan"], "expects a finite float"),
    (["--set", "bo10d.beta=inf"], "expects a finite float"),
])
def test_bad_seed_and_non_finite_settings_are_refused_before_any_trial(tmp_path, args, message):
    result = nasbench("run", "--algo", "bo10d", "--trials", "1", "--out", str(tmp_path), *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "ptb").exists()


def test_a_result_file_that_is_not_utf8_is_one_line(jobs1, tmp_path):
    import shutil

    out1, _ = jobs1
    shutil.copytree(out1 / "ptb" / "hb", tmp_path / "ptb" / "hb")
    (tmp_path / "ptb" / "hb" / "trial-0.json").write_bytes(b'{"format": "\xff\xfe"}')
    for command in ("report", "plot"):
        result = nasbench(command, str(tmp_path))
        assert result.returncode == 2 and "is not UTF-8 text" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_an_edited_l_star_is_caught_where_the_data_is_at_hand(jobs1, tmp_path):
    import shutil

    out1, _ = jobs1
    shutil.copytree(out1 / "ptb" / "hb", tmp_path / "ptb" / "hb")
    for path in (tmp_path / "ptb" / "hb").glob("trial-*.json"):   # every file, consistently: L* 0.01 lower
        record = json.loads(path.read_text())
        record["l_star"] -= 0.01
        path.write_text(json.dumps(record))
    for command in ("report", "plot"):
        result = nasbench(command, str(tmp_path))
        assert result.returncode == 2 and "differ from the benchmark's" in result.stderr


def test_two_labelled_variants_of_one_algorithm_share_a_folder_a_report_and_a_plot(tmp_path):
    common = ["--trials", "2", "--budget-hours", "60", "--out", str(tmp_path), "--json"]
    base = nasbench("run", "--algo", "hb", *common)
    variant = nasbench("run", "--algo", "hb", "--set", "eta=4", "--label", "hb-eta4", *common)
    assert base.returncode == 0 and variant.returncode == 0, variant.stderr
    assert json.loads(variant.stdout)["algorithms"].keys() == {"hb-eta4"}
    record = json.loads((tmp_path / "ptb" / "hb-eta4" / "trial-0.json").read_text())
    assert record["label"] == "hb-eta4" and record["algo"] == "hb" and record["settings"]["eta"] == 4
    report = json.loads(nasbench("report", str(tmp_path), "--json").stdout)
    assert set(report["benchmarks"]["ptb"]["algorithms"]) == {"hb", "hb-eta4"}
    figures = nasbench("plot", str(tmp_path), "--out", str(tmp_path / "figs"), "--format", "png")
    assert figures.returncode == 0, figures.stderr
    again = nasbench("run", "--algo", "hb", "--set", "eta=4", "--label", "hb-eta4", *common)
    assert json.loads(again.stdout)["skipped"] == 2                  # resumes under its label
    for bad in (["--label", "a/b"], ["--label", "x", "--algo", "hb,rs50e"]):
        args = ["run", "--algo", "hb", *common[:-1], *bad] if "--algo" not in bad else ["run", *common[:-1], *bad]
        result = nasbench(*args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_first_use_of_graph2vec_features_shows_its_progress(tmp_path):
    """Building our graph2vec features takes a minute or two on PTB the first time: the run says so and
    counts the epochs (WT2's 344 cells keep this test short)."""
    result = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "wt2", "--algo", "bo50d",
                             "--trials", "1", "--budget-hours", "5", "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, env={**os.environ, "NASBENCH_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert "graph2vec g2v-50d (built once, then cached)" in result.stdout and "30/30 epochs" in result.stdout


def test_summary_wording_for_one_trial_and_a_plot_of_one_algorithm(tmp_path):
    result = nasbench("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "20", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "(1 trial)" in result.stdout and "trials)" not in result.stdout and "nan" not in result.stdout
    figures = nasbench("plot", str(tmp_path), "--out", str(tmp_path / "figs"), "--format", "png", "--json")
    names = {p.rsplit("/", 1)[-1] for p in json.loads(figures.stdout)["files"]}
    assert names == {"ptb-regret-vs-time.png", "ptb-final-regret-cdf.png"}   # no ranking of one algorithm


def test_budget_release_runs_the_notebooks_fixed_counts(tmp_path, ptb):
    """rs50e 100 architectures, rs10e 500, re 130, hb-release one pass; 5 trials; labelled ALGO@release;
    a rerun does nothing; algorithms the notebook does not run are refused in one line."""
    from test_run_processes import nasbench

    args = ("run", "--algo", "rs50e,rs10e,re,hb-release", "--budget", "release", "--out", str(tmp_path), "--json")
    first = nasbench(*args)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert sorted(summary["algorithms"]) == ["hb-release@release", "re@release", "rs10e@release", "rs50e@release"]
    for algo, count in (("rs50e", 100), ("rs10e", 500), ("re", 130)):
        records = [json.loads((tmp_path / "ptb" / f"{algo}@release" / f"trial-{k}.json").read_text()) for k in range(5)]
        assert [r["n_evaluations"] for r in records] == [count] * 5 and records[0]["max_jobs"] == count
        assert all(r["simulated_time_s"] < 400 * 3600 for r in records)
    assert not (tmp_path / "ptb" / "rs50e@release" / "trial-5.json").exists()
    assert json.loads(nasbench(*args).stdout)["ran"] == 0
    refused = nasbench("run", "--algo", "tpe", "--budget", "release", "--out", str(tmp_path))
    assert refused.returncode == 2 and "covers the release notebook's algorithms" in refused.stderr
    report = nasbench("report", str(tmp_path), "--json")
    assert report.returncode == 0, report.stderr
