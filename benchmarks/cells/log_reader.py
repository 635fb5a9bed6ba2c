"""Read NAS-Bench-NLP training logs from a zip or a folder of `log_stats_model_*.json` files.

Each log is checked for the keys and types the benchmark needs, wall times that are finite and
positive (a non-finite or negative one would make training free, endless or refunded), and no more
epochs than the benchmark has; a bad log is named in the error.
"""
import math
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.core.errors import DataError

LOG_NAME = re.compile(r"(?:^|/)log_stats_model_(\d+)_[^/]*\.json$")
LIST_KEYS = ("wall_times", "train_losses", "val_losses", "test_losses")


@dataclass(frozen=True)
class LogRecord:
    """One architecture's training log; losses are log-perplexities, wall times seconds per epoch."""
    name: str
    recepie_id: int
    recipe: str
    num_params: int
    status: str
    wall_times: list
    train_losses: list
    val_losses: list
    test_losses: list


def log_source(logs_path: Path) -> Path:
    """The zip or folder to read: `logs_path` may be `X/logs.zip` or the folder `X/` holding the JSONs."""
    if logs_path.is_file():
        return logs_path
    folder = logs_path.with_suffix("") if logs_path.suffix == ".zip" else logs_path
    if folder.is_dir():
        return folder
    if logs_path.parent.is_dir() and any(logs_path.parent.glob("log_stats_model_*.json")):
        return logs_path.parent
    raise DataError(f"training logs not found: looked for {logs_path} (a zip) and for "
                    f"log_stats_model_*.json files in {logs_path.parent}")


def list_log_names(source: Path) -> list[str]:
    """Names of the log files in a zip or folder, sorted."""
    if source.is_dir():
        names = sorted(p.name for p in source.glob("log_stats_model_*.json"))
    else:
        try:
            with zipfile.ZipFile(source) as archive:
                names = sorted(n for n in archive.namelist() if LOG_NAME.search(n))
        except (zipfile.BadZipFile, OSError) as exc:
            raise DataError(f"cannot read {source} as a zip of training logs ({exc}); "
                            "re-download it or pass --data-dir") from None
    if not names:
        raise DataError(f"no log_stats_model_*.json files in {source}")
    return names


def read_logs(source: Path, max_epochs: int | None = None) -> list[LogRecord]:
    """Every log in the zip or folder, in file-name order; `max_epochs`: the benchmark's epoch count,
    which no log may exceed."""
    from benchmarks.core.progress import step

    names = list_log_names(source)
    records = []
    what = f"reading {len(names):,} training logs into the packed cache (once)"
    if source.is_dir():
        for k, name in enumerate(names):
            try:
                raw = (source / name).read_bytes()
            except OSError as exc:
                raise DataError(f"cannot read log {source / name} ({exc.strerror or exc}); remove or repair it") from None
            records.append(parse_log(name, raw, max_epochs))
            if k % 200 == 0:
                step(what, k, len(names))
        step(what, len(names), len(names))
        return records
    try:
        with zipfile.ZipFile(source) as archive:
            for k, name in enumerate(names):
                records.append(parse_log(name, archive.read(name), max_epochs))
                if k % 200 == 0:
                    step(what, k, len(names))
        step(what, len(names), len(names))
    except (zipfile.BadZipFile, OSError, EOFError, zlib_error()) as exc:
        raise DataError(f"corrupt zip {source} ({exc}); re-download it") from None
    return records


def zlib_error():
    import zlib
    return zlib.error


def parse_log(name: str, raw: bytes, max_epochs: int | None = None) -> LogRecord:
    """Parse and check one log; DataError naming the file if a key is missing or has the wrong type, a
    wall time is not a finite positive number of seconds, or it logs more than `max_epochs` epochs."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"log {name} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(f"log {name} is not a JSON object")
    for key, kind in (("recepie_id", int), ("recepie", str), ("num_params", int), ("status", str)):
        if key not in data:
            raise DataError(f"log {name} has no key '{key}'")
        if not isinstance(data[key], kind) or isinstance(data[key], bool):
            raise DataError(f"log {name}: '{key}' should be {kind.__name__}, got {type(data[key]).__name__}")
    lists = {}
    for key in LIST_KEYS:
        value = data.get(key)
        if not isinstance(value, list):
            raise DataError(f"log {name}: '{key}' should be a list of numbers, got "
                            f"{'nothing' if value is None else type(value).__name__}")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise DataError(f"log {name}: '{key}' has a value that is not a number")
        lists[key] = value
    lengths = {len(v) for v in lists.values()}
    if len(lengths) != 1:
        raise DataError(f"log {name}: per-epoch lists have different lengths "
                        f"({', '.join(f'{k}={len(v)}' for k, v in lists.items())})")
    for epoch, seconds in enumerate(lists["wall_times"], start=1):
        if not (math.isfinite(seconds) and seconds > 0):
            raise DataError(f"log {name}: wall time of epoch {epoch} is {seconds!r}; every logged epoch must "
                            "take a finite, positive number of seconds")
    if max_epochs is not None and len(lists["wall_times"]) > max_epochs:
        raise DataError(f"log {name}: {len(lists['wall_times'])} epochs logged, more than the benchmark's "
                        f"{max_epochs}")
    try:
        recipe = json.loads(data["recepie"])
    except (ValueError, RecursionError):
        recipe = None
    if not isinstance(recipe, dict):
        raise DataError(f"log {name}: 'recepie' is not the JSON text of a cell (an object of nodes)")
    match = LOG_NAME.search(name)
    if match and int(match.group(1)) != data["recepie_id"]:
        raise DataError(f"log {name}: recepie_id {data['recepie_id']} does not match its file name")
    return LogRecord(name=name.rsplit("/", 1)[-1], recepie_id=data["recepie_id"], recipe=data["recepie"],
                     num_params=data["num_params"], status=data["status"], **lists)
