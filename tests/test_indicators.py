"""`report --indicator`: HV regret over the table's whole range and IGD+ beside the recorded HV regret,
recomputed here naively from a trial's final front and the raw NMTHPO files."""
import json
import subprocess
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
    refused = cli("report", out, "--indicator", "igd+", "--at", "5")
    assert refused.returncode == 2 and "final fronts only" in refused.stderr
