"""`nasbench check`: a planted regression fails, an unchanged re-run passes, mismatches are refused."""
import json

import pytest

from nasbench_cli.main import cli

BUDGET_H = 200.0
TRIALS = 10


def run_cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        cli(list(map(str, args)))
    captured = capsys.readouterr()
    return exc.value.code, captured.out, captured.err


def write_run(root, algo, budget_h=BUDGET_H, overrides=None, disguise_as_default=False, trials=TRIALS):
    """Run `trials` real PTB trials (seed = trial index) into root/ptb/<algo>/.

    `disguise_as_default`: label the records with the algorithm's default settings, as a code change
    that makes an optimizer worse without touching its settings would (the planted regression)."""
    from benchmarks.core.atomic import write_json_atomic
    from nasbench_cli.results.files import trial_path
    from nasbench_cli.harness.trial import run_trial
    from nasbench_cli.results.record import settings_hash
    from optimizers.registry import make_algorithm

    for k in range(trials):
        record = run_trial("ptb", algo, k, k, budget_h * 3600, overrides=overrides)
        if disguise_as_default:
            record["settings"] = make_algorithm(algo).settings_dict()
            record["settings_hash"] = settings_hash("ptb", algo, record["settings"], record["budget_s"])
        write_json_atomic(trial_path(root, "ptb", algo, k), record)
    return root


@pytest.fixture(scope="module")
def baseline(ptb, tmp_path_factory):
    """A baseline of normal hb and rs10e (10 trials, 200 h), written by the CLI."""
    root = write_run(write_run(tmp_path_factory.mktemp("base"), "hb"), "rs10e")
    path = root / "baseline.json"
    with pytest.raises(SystemExit) as exc:
        cli(["check", str(root), "--write-baseline", str(path)])
    assert exc.value.code == 0
    return path


def test_baseline_file_holds_every_trial(baseline):
    data = json.loads(baseline.read_text())
    entry = data["benchmarks"]["ptb"]["algorithms"]["hb"]
    assert entry["budget_s"] == BUDGET_H * 3600 and entry["seeds"] == list(range(TRIALS))
    assert len(entry["final_regret"]) == TRIALS and entry["settings"]["promote"] == "best"
    assert set(data["benchmarks"]["ptb"]["algorithms"]) == {"hb", "rs10e"}
    assert not list(baseline.parent.glob(".baseline.json*"))          # atomic write left no temp file


def test_unchanged_rerun_passes(baseline, tmp_path, capsys):
    rerun = write_run(write_run(tmp_path, "hb"), "rs10e")
    code, out, err = run_cli(capsys, "check", rerun, "--baseline", baseline)
    assert code == 0, out + err
    lines = [line for line in out.splitlines() if line.startswith("ok")]
    assert len(lines) == 2 and all("baseline mean" in line and "current mean" in line and "p = " in line
                                   for line in lines)
    code, out, _ = run_cli(capsys, "check", rerun, "--baseline", baseline, "--json")
    outcome = json.loads(out)
    assert code == 0 and outcome["passed"] and {c["status"] for c in outcome["checks"]} == {"ok"}


def test_planted_regression_fails(baseline, tmp_path, capsys):
    # Hyperband that promotes the worst third, with unchanged settings: only its results differ
    worse = write_run(write_run(tmp_path, "hb", overrides={"promote": "worst"}, disguise_as_default=True), "rs10e")
    code, out, err = run_cli(capsys, "check", worse, "--baseline", baseline)
    assert code == 1, out + err
    assert any(line.startswith("FAIL") and "ptb/hb" in line and "worse by" in line for line in out.splitlines())
    assert any(line.startswith("ok") and "ptb/rs10e" in line for line in out.splitlines())
    code, out, _ = run_cli(capsys, "check", worse, "--baseline", baseline, "--json")
    outcome = json.loads(out)
    hb = next(c for c in outcome["checks"] if c["algo"] == "hb")
    assert code == 1 and not outcome["passed"] and hb["status"] == "regressed"
    assert hb["p_value"] < 0.05 and hb["effect"] > 0.01
    # the same regression within a generous min-effect is tolerated
    code, out, _ = run_cli(capsys, "check", worse, "--baseline", baseline, "--min-effect", "1.0")
    assert code == 0 and "significant, but worse by only" in out


def test_changed_settings_or_budget_are_refused(baseline, tmp_path, capsys):
    other = write_run(tmp_path / "settings", "hb", overrides={"promote": "worst"})
    code, _, err = run_cli(capsys, "check", other, "--baseline", baseline, "--algo", "hb")
    assert code == 2 and "promote: baseline 'best', results 'worst'" in err
    shorter = write_run(tmp_path / "budget", "hb", budget_h=100.0, trials=3)
    code, _, err = run_cli(capsys, "check", shorter, "--baseline", baseline, "--algo", "hb")
    assert code == 2 and "budget 100 h in the results, 200 h in the baseline" in err


def test_other_benchmark_is_refused(baseline, tmp_path, capsys):
    data = json.loads(baseline.read_text())
    data["benchmarks"] = {"wt2": data["benchmarks"]["ptb"]}
    renamed = tmp_path / "wt2-baseline.json"
    renamed.write_text(json.dumps(data))
    code, _, err = run_cli(capsys, "check", baseline.parent, "--baseline", renamed)
    assert code == 2 and "results hold benchmark 'ptb', the baseline has only wt2" in err


def test_missing_algorithm_fails_and_new_one_is_only_noted(baseline, tmp_path, capsys):
    only_hb = write_run(tmp_path, "hb")
    write_run(only_hb, "rs50e", trials=2)
    code, out, _ = run_cli(capsys, "check", only_hb, "--baseline", baseline)
    assert code == 1
    assert any(line.startswith("FAIL") and "ptb/rs10e" in line and "no results" in line for line in out.splitlines())
    assert any(line.startswith("note") and "ptb/rs50e" in line and "not checked" in line for line in out.splitlines())
    code, out, _ = run_cli(capsys, "check", only_hb, "--baseline", baseline, "--algo", "hb")
    assert code == 0                                   # --algo restricts the gate to what was run


def test_usage_errors(baseline, tmp_path, capsys):
    code, _, err = run_cli(capsys, "check", baseline.parent)
    assert code == 2 and "exactly one of --baseline" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    code, _, err = run_cli(capsys, "check", baseline.parent, "--baseline", broken)
    assert code == 2 and "malformed" in err
    code, _, err = run_cli(capsys, "check", baseline.parent, "--baseline", tmp_path / "none.json")
    assert code == 2 and "baseline file not found" in err


@pytest.mark.parametrize("option", [("--alpha", "nan"), ("--alpha", "inf"), ("--min-effect", "nan"),
                                    ("--min-effect", "inf")])
def test_non_finite_options_are_refused(baseline, capsys, option):
    code, _, err = run_cli(capsys, "check", baseline.parent, "--baseline", baseline, *option)
    assert code == 2 and ("must be a finite number" in err or "is not in the range" in err)


@pytest.mark.parametrize("bad", [float("nan"), -0.1, "0.2", float("inf")])
def test_a_baseline_with_impossible_regrets_is_refused(baseline, tmp_path, capsys, bad):
    """A NaN regret compares false with everything: a gate built on it would pass any regression."""
    data = json.loads(baseline.read_text())
    data["benchmarks"]["ptb"]["algorithms"]["hb"]["final_regret"][3] = bad
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    code, _, err = run_cli(capsys, "check", baseline.parent, "--baseline", edited)
    assert code == 2 and "not a finite number >= 0" in err


def _one_trial(root, seed, overrides=None):
    """One real hb trial (trial 0, seed `seed`) into root/ptb/hb, recorded with hb's default settings."""
    from benchmarks.core.atomic import write_json_atomic
    from nasbench_cli.harness.trial import run_trial
    from nasbench_cli.results.record import settings_hash
    from nasbench_cli.results.files import trial_path
    from optimizers.registry import make_algorithm

    record = run_trial("ptb", "hb", 0, seed, BUDGET_H * 3600, overrides=overrides)
    record["settings"] = make_algorithm("hb").settings_dict()
    record["settings_hash"] = settings_hash("ptb", "hb", record["settings"], record["budget_s"])
    write_json_atomic(trial_path(root, "ptb", "hb", 0), record)
    return root, record["final_regret"]


def test_too_few_trials_fail_unless_allowed_and_a_rise_never_passes(baseline, tmp_path, capsys):
    """Issue 29: one much worse hb trial against a 10-trial baseline used to print `ok` and pass."""
    regrets = json.loads(baseline.read_text())["benchmarks"]["ptb"]["algorithms"]["hb"]["final_regret"]
    mean = sum(regrets) / len(regrets)
    for seed in range(20):                # a single run of hb promoting the worst third, clearly worse
        worse, regret = _one_trial(tmp_path / f"worse{seed}", seed, {"promote": "worst"})
        if regret > mean + 0.05:
            break
    assert regret > mean + 0.05
    code, out, _ = run_cli(capsys, "check", worse, "--baseline", baseline, "--algo", "hb")
    assert code == 1 and "FAIL     ptb/hb" in out and "too few trials to test it" in out
    code, out, _ = run_cli(capsys, "check", worse, "--baseline", baseline, "--algo", "hb", "--allow-underpowered")
    assert code == 1 and "too few trials to test it" in out          # a rise is never ok
    best_seed = min(range(TRIALS), key=regrets.__getitem__)           # its regret is at most the mean
    same, _ = _one_trial(tmp_path / "same", best_seed)
    code, out, _ = run_cli(capsys, "check", same, "--baseline", baseline, "--algo", "hb")
    assert code == 1 and "1 trials against the baseline's 10" in out and "--allow-underpowered" in out
    code, out, err = run_cli(capsys, "check", same, "--baseline", baseline, "--algo", "hb", "--allow-underpowered")
    assert code == 0 and "passed only because of --allow-underpowered" in err
