"""`features(benchmark, kind)`: shipped alignment, g2v cache round trip and repair, CLI."""
import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from benchmarks.core import features as feats
from benchmarks.core.errors import UserError
from benchmarks.cells.graph2vec import ALGORITHM_VERSION
from benchmarks.core.features import FEATURE_KINDS, feature_cache_info, features, g2v_cache_path, g2v_features


def _subset(ptb, n=100, name="ptb-subset"):
    """A benchmark-like object holding the first `n` PTB cells (a g2v build takes well under a second)."""
    search = SimpleNamespace(name=name, n=n, ids=ptb.search.ids[:n], recipes=ptb.search.recipes[:n],
                             shipped_features=None)
    return SimpleNamespace(name=name, search=search, checksum=f"subset{n}" + ptb.checksum,
                           cache_path=ptb.cache_path)


def test_shipped_features_align_with_csv_rows(ptb, data_dir):
    matrix = features(ptb, "shipped-10d")
    assert matrix.shape == (ptb.search.n, 10) and matrix.dtype == np.float64
    with open(data_dir / "data" / "doc2vec_features_lowdim.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    picked = rows[:3] + rows[len(rows) // 2:len(rows) // 2 + 2] + rows[-3:]
    picked += [r for r in rows if r["recepie_id"] in ("1000000", "1000001", "1000002")]
    assert len(picked) == 11
    for row in picked:
        expected = [float(row[f"v{i:02d}"]) for i in range(10)]
        np.testing.assert_allclose(matrix[ptb.search.index_of(int(row["recepie_id"]))], expected, rtol=1e-6)


def test_wt2_ships_no_features_and_unknown_kind_fails(wt2, ptb):
    assert wt2.search.shipped_features is None      # shipped-10d reads our g2v-10d there (tests/test_wt2.py)
    with pytest.raises(UserError, match="unknown feature kind"):
        features(ptb, "g2v-7d")
    with pytest.raises(UserError, match="another search space's encoding"):
        features(ptb, "bert-encoding")
    assert set(FEATURE_KINDS) == {"shipped-10d", "g2v-10d", "g2v-50d", "bert-encoding", "cell-encoding", "gpt-encoding",
                                 "nmt-encoding", "lora-encoding"}


def test_g2v_cache_round_trip(ptb, monkeypatch):
    bench = _subset(ptb)
    path = g2v_cache_path(bench, 10)
    assert not path.exists()
    built = g2v_features(bench, 10)
    assert path.exists() and built.shape == (100, 10) and not built.flags.writeable
    assert feature_cache_info(bench)["kinds"]["g2v-10d"]["cached"] is True
    assert feature_cache_info(bench)["kinds"]["g2v-50d"]["cached"] is False

    def no_build(*args, **kwargs):
        raise AssertionError("should have been read from the cache")

    monkeypatch.setattr("benchmarks.cells.graph2vec.build_graph2vec", no_build)
    feats._MEMO.clear()
    np.testing.assert_array_equal(g2v_features(bench, 10), built)
    assert g2v_features(bench, 10) is g2v_features(bench, 10)        # memoised within the process


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong-shape"])
def test_corrupt_g2v_cache_is_rebuilt(ptb, damage):
    bench = _subset(ptb, n=60, name=f"ptb-{damage}")
    good = np.array(g2v_features(bench, 10))
    path = g2v_cache_path(bench, 10)
    if damage == "garbage":
        path.write_bytes(b"not an npz file at all")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:300])
    else:
        np.savez(path, features=np.zeros((3, 10)), ids=np.arange(3), version=np.array(ALGORITHM_VERSION))
    assert feature_cache_info(bench)["kinds"]["g2v-10d"]["corrupt"] is True
    np.testing.assert_array_equal(g2v_features(bench, 10), good)
    assert feature_cache_info(bench)["kinds"]["g2v-10d"]["cached"] is True


def test_cli_build_info_and_analyze_on_wt2():
    from nasbench_cli.main import group

    runner = CliRunner()
    result = runner.invoke(group, ["features", "build", "--benchmark", "wt2", "--dims", "10", "--json"])
    assert result.exit_code == 0, result.output
    built = json.loads(result.output)["features"][0]
    assert built["shape"] == [344, 10] and built["time_s"] >= 0
    info = json.loads(runner.invoke(group, ["features", "info", "--benchmark", "wt2", "--json"]).output)
    assert info["kinds"]["g2v-10d"]["cached"] and info["kinds"]["shipped-10d"]["stands_in"] == "g2v-10d"
    assert not info["kinds"]["bert-encoding"]["available"]
    result = runner.invoke(group, ["analyze", "features", "--benchmark", "wt2", "--kinds", "g2v-10d",
                                   "--seeds", "0,1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["kinds"]["g2v-10d"]
    assert 0.0 <= report["flawed_auc"]["mean"] <= 1.0 and len(report["r2_all"]["values"]) == 2
    bad = runner.invoke(group, ["features", "build", "--dims", "ten"])
    assert bad.exit_code == 2


def test_quality_scores_separate_informative_from_noise(ptb):
    from benchmarks.cells.feature_quality import quality_scores

    rows = np.arange(0, ptb.search.n, 7)                      # ~2,000 real architectures
    flawed = ptb.search.status[rows] != "OK"
    loss = ptb.final_test_loss[rows]
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(len(rows), 4))
    informative = np.column_stack([flawed + 0.3 * rng.normal(size=len(rows)),
                                   np.nan_to_num(loss, nan=0.0), noise[:, :2]])
    good = quality_scores(informative, flawed, loss, seed=0)
    bad = quality_scores(noise, flawed, loss, seed=0)
    assert good["flawed_auc"] > 0.9 and good["r2_all"] > 0.9 and good["r2_le6"] > 0.9
    assert 0.35 < bad["flawed_auc"] < 0.65 and bad["r2_all"] < 0.1 and bad["r2_le6"] < 0.1


def test_training_order_check_runs_on_wt2(wt2):
    from benchmarks.cells.feature_quality import random_walk_documents, training_order_effect

    docs = random_walk_documents(wt2.search.recipes[:5], seed=0)
    assert docs == random_walk_documents(wt2.search.recipes[:5], seed=0)
    assert len(docs[0]) == 20 * 22 and set(docs[0][::2]) <= {"x", "node", "h_prev", "h_new"}
    check = training_order_effect(wt2, epochs=1, seeds=(0,))
    assert set(check["flawed_auc"]) == {"flawed-first", "shuffled"}
    assert all(0.0 <= v["mean"] <= 1.0 for v in check["flawed_auc"].values())


def test_two_builds_of_the_same_features_at_once_build_them_once(ptb, monkeypatch):
    """The second of two concurrent users (two runs, two test workers sharing a cache) waits for the first
    build under its lock and reads the file it wrote."""
    import threading

    from benchmarks.cells import graph2vec

    bench = _subset(ptb, 60, name="ptb-lock")
    started, builds = threading.Event(), []
    real = graph2vec.build_graph2vec

    def slow_build(*args, **kwargs):
        builds.append(1)
        started.set()
        threading.Event().wait(0.5)          # the other user arrives while this build holds the lock
        return real(*args, **kwargs)

    monkeypatch.setattr(graph2vec, "build_graph2vec", slow_build)
    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", g2v_features(bench, 10)))
    first.start()
    assert started.wait(30)
    feats._MEMO.pop(g2v_cache_path(bench, 10), None)
    second = g2v_features(bench, 10)
    first.join()
    assert len(builds) == 1
    np.testing.assert_array_equal(second, results["first"])
