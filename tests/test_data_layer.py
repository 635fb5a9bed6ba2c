"""The packed cache and the benchmark tables, on the real NAS-Bench-NLP data."""
import json
import math
import os
import shutil
import zipfile

import numpy as np
import pytest

from benchmarks.cells import packed_cache
from benchmarks.core.errors import DataError, UserError
from benchmarks.core.registry import _LOADED, load_benchmark

import cli_process


def test_ptb_facts(ptb):
    search = ptb.search
    assert search.n == 14322
    assert int((search.status == "OK").sum()) == 11598
    assert int((search.status == "loss is nan!").sum()) == 2645
    assert int((search.status == "Exception: math range error").sum()) == 79
    assert int((search.n_epochs == 50).sum()) == 11600
    assert ptb.best_id == 1000001
    assert round(ptb.l_star, 4) == 4.3626
    assert search.ids[0] == 1000000 and search.ids[-1] == 2011796
    assert np.all(np.diff(search.ids) > 0)
    assert search.shipped_features.shape == (14322, 10)


def test_rows_match_the_logs(ptb, data_dir):
    """A few rows against the raw JSON: losses, wall times, status, padding with NaN."""
    with zipfile.ZipFile(data_dir / "train_logs_single_run/logs.zip") as archive:
        names = [n for n in archive.namelist() if n.endswith(".json")]
        rng = np.random.default_rng(1)
        for name in rng.choice(names, 25, replace=False):
            log = json.loads(archive.read(name))
            row = ptb.search.index_of(log["recepie_id"])
            k = len(log["val_losses"])
            assert ptb.search.n_epochs[row] == k
            assert np.array_equal(ptb.search.val_loss[row, :k], np.array(log["val_losses"], float), equal_nan=True)
            assert np.array_equal(ptb.test_loss[row, :k], np.array(log["test_losses"], float), equal_nan=True)
            assert np.array_equal(ptb.search.wall_time_s[row, :k], np.array(log["wall_times"], float))
            assert np.isnan(ptb.search.val_loss[row, k:]).all()
            assert ptb.search.status[row] == log["status"]
            assert json.loads(ptb.search.recipes[row]) == json.loads(log["recepie"]) == ptb.search.recipe(row)
            assert ptb.search.log_names[row] == name.rsplit("/", 1)[-1]


def test_shipped_features_aligned_by_id(ptb, data_dir):
    with open(data_dir / "data/doc2vec_features_lowdim.csv") as handle:
        rows = [line.strip().split(",") for line in handle][1:]
    for row in rows[:: len(rows) // 20]:
        index = ptb.search.index_of(int(row[0]))
        assert np.allclose(ptb.search.shipped_features[index], [float(v) for v in row[1:]])


def test_search_table_has_no_test_losses(ptb):
    assert not [name for name in vars(ptb.search) if "test" in name.lower()]
    assert not [name for name in dir(type(ptb.search)) if "test" in name.lower()]


def test_unknown_id_is_a_user_error(ptb):
    with pytest.raises(UserError, match="unknown architecture id 42"):
        ptb.search.index_of(42)
    with pytest.raises(UserError, match="out of range"):
        ptb.search.check_index(ptb.search.n)


def test_wt2_keeps_one_row_per_id(wt2):
    assert wt2.search.n == 344 and len(set(wt2.search.ids.tolist())) == 344
    assert len(wt2.dropped_logs) == 1 and "1002429" in wt2.dropped_logs[0]
    assert wt2.search.shipped_features is None


# --- cache behaviour, on a private copy of the small WT2 data --------------------------------------
@pytest.fixture
def wt2_copy(tmp_path, data_dir, monkeypatch):
    root = tmp_path / "data"
    (root / "train_logs_wikitext-2").mkdir(parents=True)
    shutil.copy(data_dir / "train_logs_wikitext-2/logs.zip", root / "train_logs_wikitext-2/logs.zip")
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    _LOADED.clear()
    yield root
    _LOADED.clear()


def test_second_load_reads_only_the_cache(wt2_copy, monkeypatch):
    first = load_benchmark("wt2", wt2_copy)
    _LOADED.clear()
    monkeypatch.setattr(packed_cache, "read_logs", lambda *a: pytest.fail("logs parsed again"))
    second = load_benchmark("wt2", wt2_copy)
    assert second.cache_path == first.cache_path
    assert np.array_equal(first.search.val_loss, second.search.val_loss, equal_nan=True)
    assert first.checksum == second.checksum and len(first.checksum) == 64


def test_corrupt_cache_is_rebuilt(wt2_copy, capsys):
    first = load_benchmark("wt2", wt2_copy)
    _LOADED.clear()
    first.cache_path.write_bytes(b"not a numpy file")
    again = load_benchmark("wt2", wt2_copy)
    assert "rebuilding" in capsys.readouterr().err
    assert again.search.n == first.search.n
    assert np.array_equal(again.test_loss, first.test_loss, equal_nan=True)


def test_stale_cache_is_not_trusted(wt2_copy):
    first = load_benchmark("wt2", wt2_copy)
    _LOADED.clear()
    zip_path = wt2_copy / "train_logs_wikitext-2/logs.zip"
    with zipfile.ZipFile(zip_path) as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".json"))
        kept = {n: archive.read(n) for n in names[:-5]}
    with zipfile.ZipFile(zip_path, "w") as archive:
        for name, raw in kept.items():
            archive.writestr(name, raw)
    second = load_benchmark("wt2", wt2_copy)
    assert second.cache_path != first.cache_path
    assert second.search.n < first.search.n


def test_folder_of_json_logs_equals_zip(wt2_copy):
    from_zip = load_benchmark("wt2", wt2_copy)
    _LOADED.clear()
    folder = wt2_copy / "train_logs_wikitext-2"
    with zipfile.ZipFile(folder / "logs.zip") as archive:
        archive.extractall(folder / "logs")
    os.unlink(folder / "logs.zip")
    from_folder = load_benchmark("wt2", wt2_copy)
    assert from_folder.source.is_dir()
    assert np.array_equal(from_folder.search.ids, from_zip.search.ids)
    assert np.array_equal(from_folder.test_loss, from_zip.test_loss, equal_nan=True)


def _write_zip(path, logs: dict):
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, log in logs.items():
            archive.writestr(name, log if isinstance(log, (str, bytes)) else json.dumps(log))


def _tiny_logs(data_dir, n=3):
    with zipfile.ZipFile(data_dir / "train_logs_wikitext-2/logs.zip") as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".json"))[:n]
        return {name: json.loads(archive.read(name)) for name in names}


def test_missing_folder_says_where_it_looked(tmp_path):
    with pytest.raises(DataError, match=str(tmp_path / "nowhere")):
        load_benchmark("ptb", tmp_path / "nowhere")


def test_missing_zip(tmp_path):
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match="training logs not found"):
        load_benchmark("wt2", tmp_path / "data")


def test_corrupt_zip(tmp_path, monkeypatch):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "data/train_logs_wikitext-2/logs.zip"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(DataError, match="logs.zip"):
        load_benchmark("wt2", tmp_path / "data")


@pytest.mark.parametrize("key,value,message", [
    ("val_losses", None, "'val_losses' should be a list"),
    ("recepie_id", "7", "'recepie_id' should be int"),
    ("test_losses", ["x"], "'test_losses' has a value that is not a number"),
    ("status", None, "has no key 'status'"),
])
def test_bad_log_names_the_file(tmp_path, monkeypatch, data_dir, key, value, message):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    bad_name = sorted(logs)[1]
    if value is None:
        del logs[bad_name][key]
    else:
        logs[bad_name][key] = value
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", logs)
    with pytest.raises(DataError, match=message) as info:
        load_benchmark("wt2", tmp_path / "data")
    assert bad_name in str(info.value)


@pytest.mark.parametrize("wall_time", [math.inf, math.nan, -5.0, 0.0])
def test_non_finite_or_non_positive_wall_times_are_refused(tmp_path, monkeypatch, data_dir, wall_time):
    """An infinite epoch would end every trial that reaches it, a NaN one would be free and a negative
    one would give budget back: the log is refused, by name, before anything is built."""
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    bad_name = sorted(logs)[2]
    logs[bad_name]["wall_times"][3] = wall_time
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", logs)
    with pytest.raises(DataError, match="wall time of epoch 4") as info:
        load_benchmark("wt2", tmp_path / "data")
    assert bad_name in str(info.value)
    assert not list((tmp_path / "cache").glob("*.npz"))


def test_more_epochs_than_the_benchmark_are_refused(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    bad_name = sorted(logs)[0]
    for key in ("wall_times", "train_losses", "val_losses", "test_losses"):
        logs[bad_name][key] = logs[bad_name][key] + logs[bad_name][key][:1]      # 51 epochs
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", logs)
    with pytest.raises(DataError, match="51 epochs logged, more than the benchmark's 50") as info:
        load_benchmark("wt2", tmp_path / "data")
    assert bad_name in str(info.value)


def test_a_bad_log_is_one_line_from_the_cli(tmp_path, data_dir):
    import sys

    logs = _tiny_logs(data_dir)
    logs[sorted(logs)[1]]["wall_times"][0] = -1.0
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", logs)
    result = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "data", "info", "--benchmark", "wt2",
                             "--data-dir", str(tmp_path / "data")], capture_output=True, text=True,
                            env={**os.environ, "NASBENCH_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "wall time of epoch 1 is -1.0" in result.stderr


def test_features_csv_with_other_ids_loads_and_only_its_readers_refuse(tmp_path, monkeypatch, data_dir):
    """Rows for ids without a log are ignored and counted; a logged id without a row is refused only by
    what reads the shipped features (issue 28: custom data folders)."""
    from benchmarks.core.errors import UserError
    from benchmarks.core.features import features

    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    _write_zip(tmp_path / "data/train_logs_single_run/logs.zip", logs)
    ids = [log["recepie_id"] for log in logs.values()]
    csv = tmp_path / "data/data/doc2vec_features_lowdim.csv"
    csv.parent.mkdir(parents=True)
    csv.write_text("recepie_id,v00\n" + "".join(f"{i},0.5\n" for i in ids[:-1] + [9999999, 9999998]))
    loaded = load_benchmark("ptb", tmp_path / "data")
    assert loaded.search.features_extra_rows == 2
    assert np.isnan(loaded.search.shipped_features[loaded.search.index_of(ids[-1])]).all()
    with pytest.raises(UserError, match=f"has no row for 1 of the 3 cells \\(ids {ids[-1]}\\)"):
        features(loaded, "shipped-10d")
    csv.write_text("recepie_id,v00\n" + "".join(f"{i},0.5\n" for i in ids))
    monkeypatch.setattr("benchmarks.core.registry._LOADED", {})     # loaded once per process otherwise
    loaded = load_benchmark("ptb", tmp_path / "data")
    assert loaded.search.shipped_features.shape == (3, 1) and loaded.search.features_extra_rows == 0
    assert features(loaded, "shipped-10d").shape == (3, 1)


def test_final_test_loss(ptb):
    row = ptb.search.index_of(1000001)
    assert ptb.final_test_loss[row] == ptb.test_loss[row, 49]
    assert math.isclose(math.exp(ptb.final_test_loss[row]), 78.89, abs_tol=0.01)
    empty = np.flatnonzero(ptb.search.n_epochs == 0)
    assert len(empty) == 65 and np.isnan(ptb.final_test_loss[empty]).all()


@pytest.mark.parametrize("row, message", [("dup", "appears twice"), ("nan", "not a finite number")])
def test_features_csv_with_a_duplicate_id_or_nan_is_refused(tmp_path, monkeypatch, data_dir, row, message):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    _write_zip(tmp_path / "data/train_logs_single_run/logs.zip", logs)
    ids = [log["recepie_id"] for log in logs.values()]
    lines = [f"{i},0.5" for i in ids] + ([f"{ids[0]},0.7"] if row == "dup" else [])
    if row == "nan":
        lines[1] = f"{ids[1]},nan"
    csv = tmp_path / "data/data/doc2vec_features_lowdim.csv"
    csv.parent.mkdir(parents=True)
    csv.write_text("recepie_id,v00\n" + "\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message):
        load_benchmark("ptb", tmp_path / "data")


def test_a_killed_cache_build_leaves_no_temp_file_for_good(tmp_path, monkeypatch, data_dir):
    import time

    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", _tiny_logs(data_dir))
    loaded = load_benchmark("wt2", tmp_path / "data")
    path = loaded.cache_path
    stale = path.parent / f".{path.name}.abc123.tmp"           # what a build killed long ago left
    fresh = path.parent / f".{path.name}.def456.tmp"           # what a build running now is writing
    for tmp in (stale, fresh):
        tmp.write_bytes(b"partial")
    old = time.time() - 2 * packed_cache.STALE_TEMP_S
    os.utime(stale, (old, old))
    load_benchmark("wt2", tmp_path / "data", rebuild_cache=True)
    assert not stale.exists() and fresh.exists()


def test_a_log_whose_recipe_is_not_json_is_refused(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    logs = _tiny_logs(data_dir)
    bad_name = sorted(logs)[0]
    logs[bad_name]["recepie"] = "{not json"
    _write_zip(tmp_path / "data/train_logs_wikitext-2/logs.zip", logs)
    with pytest.raises(DataError, match="'recepie' is not the JSON text of a cell") as info:
        load_benchmark("wt2", tmp_path / "data")
    assert bad_name in str(info.value)


def test_a_dangling_symlink_in_a_folder_of_logs_is_named(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "data/train_logs_wikitext-2"
    folder.mkdir(parents=True)
    for name, log in _tiny_logs(data_dir).items():
        (folder / name.rsplit("/", 1)[-1]).write_text(json.dumps(log))
    (folder / "log_stats_model_9999999_x_y.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(DataError, match="cannot read log .*log_stats_model_9999999"):
        load_benchmark("wt2", tmp_path / "data")


def test_verify_catches_a_source_changed_behind_the_cache_key(tmp_path, data_dir):
    """The cache key is (path, size, mtime): a change that keeps all three is only seen by --verify."""
    import sys

    path = tmp_path / "data/train_logs_wikitext-2/logs.zip"
    _write_zip(path, _tiny_logs(data_dir))
    env = {**os.environ, "NASBENCH_CACHE": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "nasbench_cli.main", "data", "info", "--benchmark", "wt2", "--data-dir",
            str(tmp_path / "data"), "--verify"]
    assert cli_process.run(args, capture_output=True, text=True, env=env).returncode == 0
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[-30] ^= 0xFF                                   # same size; zip's trailing comment area
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result = cli_process.run(args, capture_output=True, text=True, env=env)
    assert result.returncode == 1 and "verify failed" in result.stderr


def test_a_full_disk_is_one_line_and_leaves_no_temp_file(tmp_path, monkeypatch):
    import errno

    from benchmarks.core import atomic

    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))
    with pytest.raises(UserError, match="cannot write .*result.json \\(No space left on device\\)"):
        atomic.write_json_atomic(tmp_path / "result.json", {"a": 1})
    assert list(tmp_path.iterdir()) == []


def test_test_losses_refuse_a_cache_that_changed_under_a_run(ptb):
    """Test losses read back from the packed cache must come from the data the run loaded."""
    from dataclasses import replace

    from benchmarks.cells.table import test_losses

    assert np.array_equal(test_losses(ptb), ptb.test_loss, equal_nan=True)
    with pytest.raises(DataError, match="changed while a run used it"):
        test_losses(replace(ptb, checksum="another"))
