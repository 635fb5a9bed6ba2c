"""Random corruptions of a small real-data folder (8 real logs in the PTB layout, with a features CSV):
every invalid one is refused with one clean line naming the bad file, and every harmless one loads
exactly the same benchmark as the uncorrupted data."""
import json
import math
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.core.errors import DataError
from benchmarks.core.registry import _LOADED, load_benchmark

N_LOGS = 8


@pytest.fixture(scope="module")
def real_logs(data_dir):
    with zipfile.ZipFile(data_dir / "train_logs_wikitext-2/logs.zip") as archive:
        names = sorted(n for n in archive.namelist() if n.endswith(".json"))[:N_LOGS]
        return {name: json.loads(archive.read(name)) for name in names}


def write_folder(root: Path, logs: dict, feature_lines: list[str]) -> Path:
    zip_path = root / "data/train_logs_single_run/logs.zip"
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w") as archive:
        for name, log in logs.items():
            archive.writestr(name, log if isinstance(log, str) else json.dumps(log))
    csv = root / "data/data/doc2vec_features_lowdim.csv"
    csv.parent.mkdir(parents=True, exist_ok=True)
    csv.write_text("recepie_id,v00,v01\n" + "\n".join(feature_lines) + "\n")
    return root / "data"


def feature_lines(logs: dict) -> list[str]:
    return [f"{log['recepie_id']},{0.1 * k:.3f},{1 - 0.1 * k:.3f}" for k, log in enumerate(logs.values())]


def load(root: Path):
    os.environ["NASBENCH_CACHE"] = str(root / "cache")
    _LOADED.clear()
    try:
        return load_benchmark("ptb", root / "data")
    finally:
        _LOADED.clear()


INVALID = ["wall_nan", "wall_inf", "wall_negative", "wall_zero", "too_many_epochs", "recipe_not_json",
           "missing_key", "loss_not_number", "lengths_differ", "id_mismatch", "not_json",
           "features_duplicate_id", "features_nan"]
HARMLESS = ["extra_key", "reindented", "features_reordered"]
# loads (features are optional); only what reads the shipped features refuses the folder, in one line
FEATURE_GAPS = ["features_missing_id"]


def corrupt(logs: dict, lines: list[str], kind: str, which: int, epoch: int):
    """Apply one corruption to copies; returns (logs, feature lines, name of the file to blame)."""
    logs = {name: json.loads(json.dumps(log)) for name, log in logs.items()}
    lines = list(lines)
    name = sorted(logs)[which % len(logs)]
    log = logs[name]
    epoch = epoch % max(1, len(log["wall_times"]))
    csv_name = "doc2vec_features_lowdim.csv"
    if kind.startswith("wall_"):
        log["wall_times"][epoch] = {"wall_nan": math.nan, "wall_inf": math.inf, "wall_negative": -12.5,
                                    "wall_zero": 0.0}[kind]
    elif kind == "too_many_epochs":
        for key in ("wall_times", "train_losses", "val_losses", "test_losses"):
            log[key] = log[key] + log[key][:1]
    elif kind == "recipe_not_json":
        log["recepie"] = log["recepie"][:-1]
    elif kind == "missing_key":
        del log["val_losses"]
    elif kind == "loss_not_number":
        log["train_losses"][epoch] = "low"
    elif kind == "lengths_differ":
        log["test_losses"] = log["test_losses"][:-1]
    elif kind == "id_mismatch":
        log["recepie_id"] += 1
    elif kind == "not_json":
        logs[name] = json.dumps(log)[:-2]
    elif kind == "features_duplicate_id":
        lines.append(lines[which % len(lines)])
        name = csv_name
    elif kind == "features_nan":
        row = lines[which % len(lines)].split(",")
        lines[which % len(lines)] = ",".join(row[:1] + ["nan"] + row[2:])
        name = csv_name
    elif kind == "features_missing_id":
        del lines[which % len(lines)]
        name = csv_name
    elif kind == "extra_key":
        log["comment"] = "added by hand"
    elif kind == "reindented":
        logs[name] = json.dumps(log, indent=3, sort_keys=True)
    elif kind == "features_reordered":
        lines.reverse()
    return logs, lines, name


def same_benchmark(a, b) -> bool:
    def equal(x, y):
        floats = np.asarray(x).dtype.kind == "f"
        return np.array_equal(x, y, equal_nan=floats)

    return (equal(a.search.ids, b.search.ids) and equal(a.test_loss, b.test_loss)
            and all(equal(getattr(a.search, k), getattr(b.search, k))
                    for k in ("val_loss", "train_loss", "wall_time_s", "n_epochs", "status", "shipped_features")))


@pytest.fixture(scope="module")
def clean(real_logs):
    folder = tempfile.mkdtemp(prefix="nasbench-clean-")
    write_folder(Path(folder), real_logs, feature_lines(real_logs))
    saved = os.environ.get("NASBENCH_CACHE")
    try:
        return load(Path(folder))
    finally:
        if saved is not None:
            os.environ["NASBENCH_CACHE"] = saved


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(INVALID + HARMLESS + FEATURE_GAPS), which=st.integers(0, 100), epoch=st.integers(0, 100))
def test_a_corrupted_folder_is_refused_in_one_line_or_loads_the_same(real_logs, clean, kind, which, epoch):
    saved = os.environ.get("NASBENCH_CACHE")
    with tempfile.TemporaryDirectory(prefix="nasbench-corrupt-") as folder:
        logs, lines, blamed = corrupt(real_logs, feature_lines(real_logs), kind, which, epoch)
        write_folder(Path(folder), logs, lines)
        try:
            if kind in HARMLESS:
                assert same_benchmark(load(Path(folder)), clean)
            elif kind in FEATURE_GAPS:
                from benchmarks.core.errors import UserError
                from benchmarks.core.features import features

                loaded = load(Path(folder))
                assert np.isnan(loaded.search.shipped_features).any(axis=1).sum() == 1
                with pytest.raises(UserError, match="has no row for 1 of the") as info:
                    features(loaded, "shipped-10d")
                assert "\n" not in str(info.value)
            else:
                with pytest.raises(DataError) as info:
                    load(Path(folder))
                message = str(info.value)
                assert blamed.rsplit("/", 1)[-1] in message and "\n" not in message
        finally:
            if saved is not None:
                os.environ["NASBENCH_CACHE"] = saved
