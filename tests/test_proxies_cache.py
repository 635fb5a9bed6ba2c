"""The score cache: chunks merge, a run interrupted midway keeps its cells and resumes, damage is survivable."""
import importlib.util

import numpy as np
import pytest

from benchmarks.proxies.build import run_build, sample_rows
from benchmarks.proxies.score_cache import (DEFAULT_SECONDS_PER_SCORE, ScoreCache, load_scores,
                                            seconds_per_score)

# found, not imported: importing it at collection would cost every test process seconds
# (run_build's worker set-up imports torch)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
PARAMS = ("num_params",)            # analytic: exercises the whole pipeline in milliseconds per cell


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path))
    return tmp_path


def test_chunks_merge_and_later_chunks_win(tmp_path):
    cache = ScoreCache("ptb", root=tmp_path)
    cache.append([(5, {"num_params": 1.0, "jacobian_cosine": 0.5}, 2.0), (7, {"num_params": 3.0}, 2.5)],
                 ("num_params", "jacobian_cosine"))
    cache.append([(7, {"num_params": 4.0}, 0.1)], ("num_params",))
    table = cache.load()
    assert list(table.ids) == [5, 7]
    assert list(table.column("num_params", [7, 5, 9])[:2]) == [4.0, 1.0]
    assert np.isnan(table.column("num_params", [9])[0])
    assert list(table.scored_mask("jacobian_cosine", [5, 7])) == [True, False]
    compacted = cache.compact()
    assert [p.name for p in cache.files()] == ["table.npz"]
    again = cache.load()
    assert np.array_equal(again.values, compacted.values, equal_nan=True)
    assert again.column("num_params", [7])[0] == 4.0


def test_interrupted_build_keeps_finished_cells_and_resumes(ptb, cache_env):
    cache = ScoreCache("ptb")
    rows = sample_rows(ptb.search, 45)
    calls = []

    def interrupt_after_12(done, total):
        calls.append(done)
        if done == 12:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        run_build(ptb, cache, PARAMS, rows, progress=interrupt_after_12)
    assert info.value.report.interrupted and info.value.report.scored == 12
    kept = load_scores(ptb, "num_params")
    assert np.isfinite(kept).sum() == 12                      # written although the chunk was not full
    report = run_build(ptb, cache, PARAMS, rows)
    assert (report.already, report.scored, report.failed) == (12, 33, 0)
    scores = load_scores(ptb, "num_params")
    assert np.array_equal(scores[rows], ptb.search.num_params[rows].astype(float))
    assert np.isnan(np.delete(scores, rows)).all()
    assert run_build(ptb, cache, PARAMS, rows).scored == 0     # nothing left to do


def test_corrupt_chunk_is_skipped_then_set_aside_and_rescored(ptb, cache_env):
    cache = ScoreCache("ptb")
    rows = sample_rows(ptb.search, 25)
    run_build(ptb, cache, PARAMS, rows)                       # one full chunk of 20, one of 5
    first = cache.files()[0]
    first.write_bytes(b"not a zip file at all")
    with pytest.warns(RuntimeWarning, match="unreadable"):
        partial = load_scores(ptb, "num_params")
    assert np.isfinite(partial).sum() == 5
    with pytest.warns(RuntimeWarning, match="moved to"):
        report = run_build(ptb, cache, PARAMS, rows)
    assert report.scored == 20
    assert first.with_name(first.name + ".corrupt").exists()
    assert np.isfinite(load_scores(ptb, "num_params")).sum() == 25


def test_truncated_table_and_wrong_shapes_are_detected(tmp_path):
    cache = ScoreCache("ptb", root=tmp_path)
    cache.append([(1, {"num_params": 2.0}, 0.5)], PARAMS)
    cache.compact()
    data = cache.table_path.read_bytes()
    cache.table_path.write_bytes(data[: len(data) // 2])
    with pytest.warns(RuntimeWarning):
        assert len(cache.load().ids) == 0
    from benchmarks.core.atomic import save_npz_atomic

    cache.table_path.unlink()
    save_npz_atomic(cache.chunk_dir / "chunk-bad.npz", ids=np.arange(3), metrics=np.array(["num_params"]),
                    values=np.zeros((2, 1)), scored=np.ones((3, 1), bool), time_s=np.zeros((3, 1)), cpu_s=np.zeros((3, 1)),
                    solo=np.ones((3, 1), bool))
    with pytest.warns(RuntimeWarning, match="inconsistent"):
        cache.load()


def test_seconds_per_score(ptb, cache_env):
    assert seconds_per_score(ptb, "hidden_covariance_l1") == DEFAULT_SECONDS_PER_SCORE
    cache = ScoreCache("ptb")
    ids = ptb.search.ids[:3]
    cache.append([(ids[0], {"hidden_covariance_l1": -1.0}, 5.0, 0.2),
                  (ids[1], {"hidden_covariance_l1": -2.0}, 5.0, 0.4)], ("hidden_covariance_l1",))
    cache.append([(ids[2], {"hidden_covariance_l1": -3.0, "num_params": 1.0}, 20.0, 9.0)],
                 ("hidden_covariance_l1", "num_params"))
    assert seconds_per_score(ptb, "hidden_covariance_l1") == pytest.approx(0.3)   # its own passes, CPU s
    assert seconds_per_score(ptb, "num_params") == pytest.approx(9.0)
    assert seconds_per_score(ptb, "all") == DEFAULT_SECONDS_PER_SCORE              # no all-metric pass yet


def test_unknown_metric_is_a_user_error(ptb):
    from benchmarks.core.errors import UserError

    with pytest.raises(UserError, match="unknown metric"):
        load_scores(ptb, "hidden_cov")
