"""The packed columnar cache: one uncompressed .npz per data source, found by the sources' size and
mtime, holding the sources' sha256 checksum, and rebuilt whenever it is stale or unreadable.

The cache is bound to its content: it holds the sha256 of its arrays (`content_digest`, the test losses
apart in `test_loss_digest`, since trials read those alone), checked at every load. A cache whose arrays
were edited (a test loss set to 4.0, say) no longer matches and is rebuilt from the sources, so a run
never records the sources' checksum for data it did not read.
"""
import hashlib
import sys
from pathlib import Path

import numpy as np

from benchmarks.core.atomic import save_npz_atomic
from benchmarks.core.errors import DataError
from benchmarks.cells.log_reader import read_logs
from benchmarks.core.paths import cache_dir
from benchmarks.core.table import encode_blob

CACHE_FORMAT = 4     # 4: content digests
ARRAY_KEYS = ("ids", "train_loss", "val_loss", "test_loss", "wall_time_s", "n_epochs", "status",
              "num_params", "recipe_blob", "recipe_offsets", "log_name_blob", "log_name_offsets")


def source_files(source: Path, extra: list[Path]) -> list[Path]:
    files = sorted(source.glob("log_stats_model_*.json")) if source.is_dir() else [source]
    return files + [p for p in extra if p is not None]


def fingerprint(source: Path, extra: list[Path]) -> str:
    """A cheap key of the sources (path, size, mtime): changes whenever a source file changes."""
    digest = hashlib.sha256(f"format={CACHE_FORMAT}".encode())
    for path in source_files(source, extra):
        try:
            stat = path.stat()
        except OSError as exc:
            raise DataError(f"cannot read log {path} ({exc.strerror or exc}); remove or repair it") from None
        digest.update(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def checksum(source: Path, extra: list[Path]) -> str:
    """sha256 over the bytes of every source file."""
    digest = hashlib.sha256()
    for path in source_files(source, extra):
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


META_KEYS = ("format", "fingerprint", "checksum", "content_digest", "test_loss_digest")


def array_digest(arrays: dict, keys) -> str:
    """sha256 over the named arrays: name, dtype, shape and bytes of each, in name order."""
    digest = hashlib.sha256()
    for key in sorted(keys):
        array = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}|{array.dtype.str}|{array.shape}\n".encode())
        digest.update(memoryview(array).cast("B") if array.size else b"")
    return digest.hexdigest()


def content_digests(arrays: dict) -> dict:
    """{"content_digest": of every array but the test losses, "test_loss_digest": of the test losses}."""
    rest = [k for k in arrays if k not in META_KEYS and k != "test_loss"]
    return {"content_digest": array_digest(arrays, rest), "test_loss_digest": array_digest(arrays, ["test_loss"])}


def cache_path_for(name: str, key: str) -> Path:
    return cache_dir() / f"{name}-{key[:20]}.npz"


def load_cached(path: Path, key: str) -> dict | None:
    """The arrays of a valid cache file, or None if it is missing, stale or corrupt."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
        if int(arrays["format"]) != CACHE_FORMAT or str(arrays["fingerprint"]) != key:
            raise ValueError("stale")
        n = len(arrays["ids"])
        for k in ("train_loss", "val_loss", "test_loss", "wall_time_s"):
            if arrays[k].shape[0] != n or arrays[k].dtype != np.float64:
                raise ValueError(f"bad {k}")
        for k in ("n_epochs", "status", "num_params"):
            if arrays[k].shape != (n,):
                raise ValueError(f"bad {k}")
        if len(arrays["recipe_offsets"]) != n + 1 or arrays["recipe_offsets"][-1] != len(arrays["recipe_blob"]):
            raise ValueError("bad recipes")
        expected = content_digests(arrays)
        for k, value in expected.items():
            if str(arrays[k]) != value:
                raise ValueError(f"its arrays do not match their {k} (edited?)")
        return arrays
    except Exception as exc:  # any unreadable cache is rebuilt, never trusted
        print(f"nasbench: cache {path} is unusable ({exc}); rebuilding it", file=sys.stderr)
        return None


def build_arrays(name: str, source: Path, features_csv: Path | None, max_epochs: int) -> dict:
    """Parse every log (and the features CSV) into the cache's arrays."""
    records = read_logs(source, max_epochs)
    kept, dropped, seen = [], [], set()
    for record in records:
        if record.recepie_id in seen:
            dropped.append(record.name)
        else:
            seen.add(record.recepie_id)
            kept.append(record)
    kept.sort(key=lambda r: r.recepie_id)
    n = len(kept)
    width = max(max_epochs, max(len(r.val_losses) for r in kept))
    arrays = {k: np.full((n, width), np.nan) for k in ("train_loss", "val_loss", "test_loss", "wall_time_s")}
    for row, record in enumerate(kept):
        length = len(record.val_losses)
        arrays["train_loss"][row, :length] = record.train_losses
        arrays["val_loss"][row, :length] = record.val_losses
        arrays["test_loss"][row, :length] = record.test_losses
        arrays["wall_time_s"][row, :length] = record.wall_times
    arrays["ids"] = np.array([r.recepie_id for r in kept], dtype=np.int64)
    arrays["n_epochs"] = np.array([len(r.val_losses) for r in kept], dtype=np.int64)
    arrays["status"] = np.array([r.status for r in kept])
    arrays["num_params"] = np.array([r.num_params for r in kept], dtype=np.int64)
    arrays["recipe_blob"], arrays["recipe_offsets"] = encode_blob(r.recipe for r in kept)
    arrays["log_name_blob"], arrays["log_name_offsets"] = encode_blob(r.name for r in kept)
    arrays["dropped_logs"] = np.array(dropped if dropped else [], dtype=str)
    if features_csv is not None:
        arrays["shipped_features"], arrays["features_extra_rows"] = read_features_csv(features_csv, arrays["ids"])
    return arrays


def read_features_csv(path: Path, ids: np.ndarray) -> tuple[np.ndarray, int]:
    """The shipped graph2vec features `[n, d]` in the row order of `ids` (a row of NaN for an id the CSV
    lacks: only an algorithm that reads these features needs it, and is refused then), and how many
    CSV rows name an id without a log (ignored). DataError if an id appears twice or a value is not
    a finite number."""
    import csv

    try:
        with open(path, newline="") as handle:
            rows = list(csv.reader(handle))
        header, body = rows[0], rows[1:]
        if header[0] != "recepie_id":
            raise ValueError(f"first column is '{header[0]}', expected 'recepie_id'")
        table = {}
        for line, r in enumerate(body, start=2):
            if not r:
                continue
            values = [float(v) for v in r[1:]]
            if int(r[0]) in table:
                raise ValueError(f"recepie_id {r[0]} appears twice (again on line {line})")
            if not all(np.isfinite(values)):
                raise ValueError(f"line {line} (recepie_id {r[0]}) has a value that is not a finite number")
            table[int(r[0])] = values
        if any(len(v) != len(header) - 1 for v in table.values()):
            raise ValueError("rows of different lengths")
    except (OSError, ValueError, IndexError) as exc:
        raise DataError(f"cannot read features CSV {path} ({exc})") from None
    extra = len(table.keys() - set(map(int, ids)))
    missing = [np.nan] * (len(header) - 1)
    return np.array([table.get(int(i), missing) for i in ids], dtype=np.float64).reshape(len(ids), -1), extra


STALE_TEMP_S = 600      # a build takes ~15 s: a temp file this old belongs to a build that was killed


def remove_stale_temp_files(path: Path) -> int:
    """Delete temp files of `path` (`.<name>.*.tmp`, written by `save_npz_atomic`) older than
    STALE_TEMP_S seconds: a killed build leaves one (~31 MB for PTB); a build still running does not
    leave its temp file that long. Returns how many were removed."""
    import time

    removed = 0
    for tmp in Path(path).parent.glob(f".{Path(path).name}.*.tmp"):
        try:
            if time.time() - tmp.stat().st_mtime > STALE_TEMP_S:
                tmp.unlink()
                removed += 1
        except OSError:
            pass
    return removed


def load_or_build(name: str, source: Path, features_csv: Path | None, max_epochs: int,
                  rebuild: bool = False) -> tuple[dict, Path]:
    """The cached arrays for a source, building (and writing) the cache if needed."""
    extra = [features_csv] if features_csv is not None else []
    key = fingerprint(source, extra)
    path = cache_path_for(name, key)
    arrays = None if rebuild else load_cached(path, key)
    if arrays is None:
        remove_stale_temp_files(path)
        arrays = build_arrays(name, source, features_csv, max_epochs)
        arrays["format"] = np.array(CACHE_FORMAT)
        arrays["fingerprint"] = np.array(key)
        arrays["checksum"] = np.array(checksum(source, extra))
        arrays.update({k: np.array(v) for k, v in content_digests(arrays).items()})
        try:
            save_npz_atomic(path, **arrays)
        except OSError as exc:
            raise DataError(f"cannot write the cache {path} ({exc.strerror or exc}); free space there or set "
                            "NASBENCH_CACHE to a writable folder") from None
    return arrays, path
