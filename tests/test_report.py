"""`nasbench report` and the result-file loader, on real PTB trials and on hand-made records."""
import json
import math

import numpy as np
import pytest
from scipy import stats

from nasbench_cli.main import cli
from nasbench_cli.results.record import settings_hash

BUDGET_H = 100.0
TRIALS = 8


def run_cli(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        cli(list(map(str, args)))
    captured = capsys.readouterr()
    return exc.value.code, captured.out, captured.err


@pytest.fixture(scope="module")
def real_results(ptb, tmp_path_factory):
    """rs10e and hb, 8 trials each at 100 simulated hours on the real PTB data."""
    from benchmarks.core.atomic import write_json_atomic
    from nasbench_cli.results.files import trial_path
    from nasbench_cli.harness.trial import run_trial

    root = tmp_path_factory.mktemp("results")
    for algo in ("rs10e", "hb"):
        for k in range(TRIALS):
            write_json_atomic(trial_path(root, "ptb", algo, k), run_trial("ptb", algo, k, k, BUDGET_H * 3600))
    return root


def first_hit_hours(record, threshold):
    """Brute force: the first train call whose regret is <= threshold."""
    traj = record["trajectory"]
    for t, r in zip(traj["time_s"], traj["regret"]):
        if r is not None and r <= threshold:
            return t / 3600
    return None


def test_report_json_agrees_with_the_trial_files(real_results, capsys):
    code, out, err = run_cli(capsys, "report", real_results, "--json")
    assert code == 0, err
    bench = json.loads(out)["benchmarks"]["ptb"]
    records = {a: [json.loads((real_results / "ptb" / a / f"trial-{k}.json").read_text()) for k in range(TRIALS)]
               for a in ("rs10e", "hb")}
    finals = {a: np.array([r["final_regret"] for r in rs]) for a, rs in records.items()}
    means = {a: v.mean() for a, v in finals.items()}
    best = min(means, key=means.get)
    other = "rs10e" if best == "hb" else "hb"
    assert bench["best"] == best
    assert bench["l_star"] == pytest.approx(records["hb"][0]["l_star"])
    for algo, rs in records.items():
        row = bench["algorithms"][algo]
        assert row["trials"] == TRIALS and row["no_incumbent"] == 0
        assert row["mean_final_regret"] == pytest.approx(means[algo])
        assert row["median_final_regret"] == pytest.approx(np.median(finals[algo]))
        low, high = stats.t.interval(0.95, TRIALS - 1, loc=means[algo], scale=stats.sem(finals[algo]))
        assert (row["ci95_low"], row["ci95_high"]) == pytest.approx((max(0.0, low), high))
        share = np.mean([r["trajectory"]["incumbent"][-1] == r["benchmark_best_arch"] for r in rs])
        assert row["best_arch_share"] == pytest.approx(share)
        for threshold in (0.1, 0.05):
            hits = [h for h in (first_hit_hours(r, threshold) for r in rs) if h is not None]
            reach = row["reach"][f"{threshold:g}"]
            assert reach["share"] == pytest.approx(len(hits) / TRIALS)
            if hits:
                assert reach["mean_hours"] == pytest.approx(np.mean(hits))
                assert 0 < reach["mean_hours"] <= BUDGET_H
            else:
                assert reach["mean_hours"] is None
        assert row["compute_s_per_trial"] == pytest.approx(np.mean([r["compute_s"] for r in rs]))
    p = stats.mannwhitneyu(finals[other], finals[best], alternative="two-sided").pvalue
    assert bench["algorithms"][other]["p_vs_best"] == pytest.approx(p)
    assert bench["algorithms"][other]["p_vs_best_holm"] == pytest.approx(p)   # one comparison: Holm = raw
    assert bench["algorithms"][best]["p_vs_best"] is None


def test_report_table_and_markdown(real_results, capsys):
    code, out, _ = run_cli(capsys, "report", real_results)
    assert code == 0
    assert "rs10e" in out and "hb" in out and "best" in out and "p vs best" in out
    code, out, _ = run_cli(capsys, "report", real_results, "--markdown")
    assert code == 0
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 2                     # header, rule, one row per algorithm
    assert all(line.count("|") == table[0].count("|") for line in table)
    assert "after 100 simulated hours" in out


def test_holm_by_hand():
    from nasbench_cli.results.report_table import holm

    # sorted: 0.01 * 3 = 0.03; 0.03 * 2 = 0.06; 0.04 * 1 = 0.04 -> raised to 0.06 (monotone)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_mann_whitney_edge_cases():
    from nasbench_cli.results.report_table import mann_whitney

    assert mann_whitney([0.2, 0.2], [0.2, 0.2]) == 1.0            # indistinguishable: scipy gives NaN
    worse = mann_whitney([math.inf, 0.5, 0.6], [0.1, 0.2, 0.3], alternative="greater")
    assert worse == pytest.approx(stats.mannwhitneyu([9, 0.5, 0.6], [0.1, 0.2, 0.3], alternative="greater").pvalue)



def synthetic(algo, trial, regrets, times_h, best=False):
    n = len(regrets)
    return {"format": "nasbench-trial/1", "benchmark": "ptb", "algo": algo, "trial": trial, "seed": trial,
            "budget_s": 360000.0, "settings": {}, "settings_hash": settings_hash("ptb", algo, {}, 360000.0),
            "versions": {}, "data_checksum": "c",
            "l_star": 4.36, "best_arch": 7, "n_evaluations": n, "simulated_time_s": times_h[-1] * 3600,
            "final_regret": regrets[-1], "compute_s": 0.5, "wall_s": 0.6,
            "trajectory": {"time_s": [t * 3600 for t in times_h], "regret": regrets,
                           "incumbent": [None if r is None else (7 if best else 1) for r in regrets],
                           "incumbent_epoch": [None if r is None else 50 for r in regrets],
                           "arch": [1] * n, "epochs": [50] * n}}


def write(root, record, name=None):
    """Write a record (or raw text, into hb/) under root/ptb/<algo>/."""
    algo = "hb" if isinstance(record, str) else record["algo"]
    path = root / "ptb" / algo / (name or f"trial-{record['trial']}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    return path


def test_trial_without_incumbent_best_arch_and_reach(tmp_path, capsys):
    write(tmp_path, synthetic("hb", 0, [None, 0.2, 0.04], [1, 2, 30], best=True))
    write(tmp_path, synthetic("hb", 1, [0.3, 0.08], [5, 10]))
    write(tmp_path, synthetic("hb", 2, [None, None], [5, 10]))          # never had an incumbent
    code, out, _ = run_cli(capsys, "report", tmp_path, "--json")
    assert code == 0
    row = json.loads(out)["benchmarks"]["ptb"]["algorithms"]["hb"]
    assert row["no_incumbent"] == 1 and row["trials"] == 3
    assert row["mean_final_regret"] == pytest.approx(0.06)                # over the two with a result
    assert row["best_arch_share"] == pytest.approx(1 / 3)
    assert row["reach"]["0.1"] == {"mean_hours": pytest.approx(20.0), "share": pytest.approx(2 / 3)}
    assert row["reach"]["0.05"] == {"mean_hours": pytest.approx(30.0), "share": pytest.approx(1 / 3)}
    code, out, _ = run_cli(capsys, "report", tmp_path, "--markdown")
    assert "3 (1 none)" in out


def test_loader_ignores_temp_and_junk_and_names_bad_files(tmp_path, capsys):
    from nasbench_cli.results.files import read_trial, trial_path

    good = write(tmp_path, synthetic("hb", 0, [0.2], [1]))
    write(tmp_path, "{half a file", name=".trial-1.json.ab12.tmp")
    write(tmp_path, "notes", name="README.txt")
    assert trial_path(tmp_path, "ptb", "hb", 0) == good
    assert read_trial(good)["trial"] == 0
    assert read_trial(tmp_path / "missing.json") is None
    code, _, _ = run_cli(capsys, "report", tmp_path, "--json")
    assert code == 0
    bad = write(tmp_path, "{half a file", name="trial-1.json")
    assert read_trial(bad) is None
    code, _, err = run_cli(capsys, "report", tmp_path)
    assert code == 2 and str(bad) in err and "not valid JSON" in err and len(err.strip().splitlines()) == 1
    record = synthetic("hb", 1, [0.2], [1])
    del record["trajectory"]
    write(tmp_path, record)
    code, _, err = run_cli(capsys, "report", tmp_path)
    assert code == 2 and "missing key(s) trajectory" in err


def test_loader_refuses_misplaced_and_mixed_trials(tmp_path, capsys):
    write(tmp_path, synthetic("hb", 0, [0.2], [1]))
    misplaced = synthetic("hb", 1, [0.2], [1])
    misplaced["algo"] = "rs10e"
    misplaced["settings_hash"] = settings_hash("ptb", "rs10e", {}, 360000.0)
    write(tmp_path, misplaced, name="../hb/trial-1.json")
    code, _, err = run_cli(capsys, "report", tmp_path)
    assert code == 2 and "holds ptb/rs10e" in err
    mixed = synthetic("hb", 1, [0.2], [1])
    mixed["settings"] = {"eta": 4}
    mixed["settings_hash"] = settings_hash("ptb", "hb", {"eta": 4}, 360000.0)
    write(tmp_path, mixed)
    code, _, err = run_cli(capsys, "report", tmp_path)
    assert code == 2 and "trials mix settings" in err


def test_empty_or_missing_folder_is_a_user_error(tmp_path, capsys):
    code, _, err = run_cli(capsys, "report", tmp_path)
    assert code == 2 and "no result files" in err
    code, _, err = run_cli(capsys, "report", tmp_path / "nope")
    assert code == 2 and "results folder not found" in err


def test_terminal_table_fits_100_columns_without_cutting_a_cell(tmp_path):
    from rich.console import Console

    from nasbench_cli.results.report_table import NARROW, build_report, print_rich, table_rows
    from nasbench_cli.results.files import load_results

    for k in range(3):
        write(tmp_path, synthetic("bo50d@16w", k, [0.31, 0.2 + k / 100], [1, 90]))
        write(tmp_path, synthetic("hb", k, [0.4, 0.1 + k / 100], [2, 50], best=True))
    data = build_report(load_results(tmp_path))
    console = Console(width=100, record=True, force_terminal=False)
    print_rich(data, console=console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    keep = [i for i, c in enumerate(["algorithm", "trials", "mean", "95% CI", "median", "best arch",
                                     "h to ≤A (share)", "h to ≤B (share)", "CPU s/trial",
                                     "p vs best (Holm)"]) if c in NARROW]
    assert "…" not in text                                   # rich marks a cut cell with an ellipsis
    words = set(text.split())
    for cells in table_rows(data["benchmarks"]["ptb"]):
        for k in keep[1:]:                                     # (a long name may wrap, as it should)
            assert set(cells[k].split()) <= words


@pytest.mark.parametrize("bench, unit, thresholds", [("ptb", "log-perplexity", (0.1, 0.05)),
                                                     ("bert", "GLUE points", (1.0, 0.5)),
                                                     ("gpt-s", "perplexity", (0.2, 0.1))])
def test_reach_thresholds_and_regret_unit_are_the_benchmarks(bench, unit, thresholds):
    from nasbench_cli.results.report_table import COLUMNS, benchmark_report, clock_columns

    records = [dict(synthetic("rs", k, [2.0, 0.7, 0.15 - k / 100, 0.08], [1, 2, 3, 4]), benchmark=bench,
                    benchmark_best_arch=7) for k in range(3)]
    report = benchmark_report({"rs": records})
    assert report["regret_unit"] == unit and report["reach_thresholds"] == list(thresholds)
    assert list(report["algorithms"]["rs"]["reach"]) == [f"{t:g}" for t in thresholds]
    headers = " | ".join(clock_columns(COLUMNS, report))
    assert all(f"to ≤{t:g} (share)" in headers for t in thresholds) and "≤A" not in headers
