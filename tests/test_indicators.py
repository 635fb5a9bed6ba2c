"""`report --indicator`: HV regret over the table's whole range and IGD+ beside the recorded HV regret,
recomputed here naively from a trial's final front and the raw NMTHPO files."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.nmt.table import data_folder

import cli_process


def cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True)


def naive_hv_2d(points, reference):
    """Area dominated by `points` (minimised, 2-D) up to `reference`: a sweep over the points by x."""
    area, best_y = 0.0, reference[1]
    for x, y in sorted(tuple(p) for p in points if p[0] < reference[0] and p[1] < reference[1]):
        if y < best_y:
            area += (reference[0] - x) * (best_y - y)
            best_y = y
    return area


def test_the_new_indicators_match_a_naive_recomputation(tmp_path):
    out = tmp_path / "r"
    done = cli("run", "--benchmark", "nmt-zh-en", "--algo", "mo-rs,mo-re", "--objectives", "bleu,decode_s",
               "--trials", "3", "--budget-evals", "15", "--out", out)
    assert done.returncode == 0, done.stderr
    evals = np.loadtxt(Path(data_folder()) / "zh-en.evals")
    points = np.c_[-evals[:, 0], evals[:, 1]]                       # minimised: -BLEU, decode seconds
    low, high = points.min(axis=0), points.max(axis=0)
    scaled = (points - low) / (high - low)
    published = np.flatnonzero(np.loadtxt(Path(data_folder()) / "zh-en.fronts"))
    true = scaled[published]
    for indicator in ("hv-range", "igd+", "hv"):
        report = json.loads(cli("report", out, "--indicator", indicator, "--json").stdout)
        bench = report["benchmarks"]["nmt-zh-en"]
        assert bench["indicator"] == indicator
        for label, row in bench["algorithms"].items():
            values = []
            for path in sorted((out / "nmt-zh-en" / label).glob("trial-*.json")):
                record = json.loads(path.read_text())
                found = scaled[[arch for arch, _ in record["front"]]]
                if indicator == "hv":
                    values.append(record["final_regret"])
                elif indicator == "hv-range":
                    values.append(naive_hv_2d(true, (1, 1)) - naive_hv_2d(found, (1, 1)))
                else:
                    values.append(np.mean([min(np.sqrt(np.sum(np.maximum(a - z, 0) ** 2)) for a in found) for z in true]))
            assert row["mean_final_regret"] == pytest.approx(np.mean(values), abs=1e-12), (indicator, label)
    text = cli("report", out, "--indicator", "igd+").stdout
    assert "IGD+ over the table's whole range" in text and "indicator igd+" in text
    # anytime: every trial's curve replayed from its jobs; at 5 and 10 evaluations the front of the
    # systems looked up by then (non-dominated, recomputed here from the raw files)
    for indicator in ("hv-range", "igd+"):
        report = json.loads(cli("report", out, "--indicator", indicator, "--at", "5,10", "--json").stdout)
        for at in (5, 10):
            bench = report["at"][f"{at}evals"]["benchmarks"]["nmt-zh-en"]
            for label, row in bench["algorithms"].items():
                values = []
                for path in sorted((out / "nmt-zh-en" / label).glob("trial-*.json")):
                    seen = scaled[sorted(set(json.loads(path.read_text())["trajectory"]["arch"][:at]))]
                    found = seen[[not ((seen <= p).all(axis=1) & (seen < p).any(axis=1)).any() for p in seen]]
                    if indicator == "hv-range":
                        values.append(naive_hv_2d(true, (1, 1)) - naive_hv_2d(found, (1, 1)))
                    else:
                        values.append(np.mean([min(np.sqrt(np.sum(np.maximum(a - z, 0) ** 2)) for a in found)
                                               for z in true]))
                assert row["mean_final_regret"] == pytest.approx(np.mean(values), abs=1e-12), (indicator, at, label)
    plot = cli("plot", out, "--indicator", "igd+", "--format", "png", "--out", tmp_path / "fig", "--json")
    assert plot.returncode == 0, plot.stderr
    assert any(Path(f).name == "nmt-zh-en-regret-vs-time.png" for f in json.loads(plot.stdout)["files"])


def test_an_indicator_curve_ends_on_the_value_of_the_final_front(ptb):
    """On ptb (validation picks the front, test scores it), the replayed curve's last value is the final
    front's value, and every value lies in the indicator's range. (Its speed: scripts/bench_hv_regret.py.)"""
    from benchmarks.core.front_regret import front_trajectory
    from benchmarks.core.pareto import objective_space
    from nasbench_cli.results.indicators import indicator_measure, final_indicators

    space = objective_space(ptb, ("logppl", "params"))
    rng = np.random.default_rng(3)
    rows = rng.integers(0, ptb.search.n, size=400)
    reached = rng.integers(1, ptb.search.max_epochs + 1, size=400)
    for name in ("hv-range", "igd+"):
        out = front_trajectory(ptb, space, rows, reached, indicator_measure(ptb, space, name))
        ids = ptb.search.ids
        record = {"benchmark": "ptb", "objectives": ["logppl", "params"], "final_regret": 0.0,
                  "front": [[int(ids[r]), int(e)] for r, e in out["front"]]}
        assert out["regret"][-1] == pytest.approx(final_indicators(record, ptb)[name], abs=1e-12)
        finite = np.array([v for v in out["regret"] if v is not None])
        assert len(finite) and (finite >= 0).all() and (finite <= (1.0 if name == "hv-range" else np.sqrt(2))).all()
