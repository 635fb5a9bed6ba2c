"""NAS-Bench-BERT as a single-fidelity benchmark table (`--benchmark bert`).

Each of the 500 entries of `BERT_benchmark.json` is one row, id = its `id`. There are no epochs: one
evaluation trains the architecture fully and costs its `time_to_train` (seconds), so the table has one
"epoch" column. The objective is the GLUE average (points, maximised). So that the harness's
"lower is better" bookkeeping applies unchanged, the loss columns hold minus GLUE: a searcher sees
-GLUE as the validation loss of the evaluation, and the regret of an incumbent is
(-GLUE) - (-best GLUE of the 500) = best GLUE - GLUE, in GLUE points. There is one score per
architecture and no validation/test split, so the searcher and the regret see the same number.

Nine architectures appear twice (ids 60/222, 97/387, 174/405, 194/438, 198/315, 221/391, 229/307,
259/487, 299/489: the same configuration trained twice, GLUE differing by up to 2 points). They are
kept as separate rows, as published: 500 rows, 491 distinct configurations.
"""
from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np

from benchmarks.flexibert.space import load_space
from benchmarks.core.errors import DataError, UserError
from benchmarks.core.space import architectures  # noqa: F401  (re-exported: the rows' architectures)
from benchmarks.core.table import Benchmark, SearchTable, encode_blob

BENCHMARK_FILE = "BERT_benchmark.json"
SPACE_FILE = "BERT_search_space.json"
METRICS_FILE = "BERT_results_activation.csv"


def bert_data_dir(data_dir=None) -> Path:
    """The folder with the NAS-Bench-BERT files: `data_dir` if given, else `NASBENCH_BERT_DATA`, else
    `../shared/training-free-nas` beside the repository; DataError if that folder lacks them."""
    import os

    from benchmarks.core.paths import REPO_ROOT

    if data_dir is not None:            # named by the user: that folder or an error, never a fallback
        candidates = [Path(data_dir).expanduser()]
    elif os.environ.get("NASBENCH_BERT_DATA"):
        candidates = [Path(os.environ["NASBENCH_BERT_DATA"]).expanduser()]
    else:
        candidates = [REPO_ROOT.parent / "shared" / "training-free-nas"]
    for folder in candidates:
        if (folder / BENCHMARK_FILE).is_file() and (folder / SPACE_FILE).is_file():
            return folder.resolve()
    raise DataError(f"NAS-Bench-BERT files ({BENCHMARK_FILE}, {SPACE_FILE}) not found in "
                    f"{', '.join(str(c) for c in candidates)}; pass --data-dir DIR or set NASBENCH_BERT_DATA")


def load_bert_benchmark(data_dir=None) -> Benchmark:
    """The 500 NAS-Bench-BERT architectures as a Benchmark (see the module docstring); DataError on a
    missing or malformed file."""
    folder = bert_data_dir(data_dir)
    source = folder / BENCHMARK_FILE
    space = load_space(folder / SPACE_FILE)
    raw = source.read_bytes()
    try:
        loaded = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"cannot read {source}: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(loaded, list) or not loaded:
        raise DataError(f"{source}: expected a non-empty JSON list of architecture records")
    entries = [_checked_record(source, k, entry) for k, entry in enumerate(loaded)]
    entries.sort(key=lambda e: e["id"])
    ids = np.array([e["id"] for e in entries], dtype=np.int64)
    glue = np.array([e["glue"] for e in entries])
    seconds = np.array([e["time_to_train"] for e in entries])
    try:
        archs = [space.parse(e["overrides"]) for e in entries]
    except UserError as exc:        # from the parser: an architecture outside the space
        raise DataError(f"{source}: {exc}") from None
    if len(set(ids.tolist())) != len(ids):
        raise DataError(f"{source}: ids must be distinct")
    n = len(ids)
    recipes = encode_blob([a.to_json() for a in archs])
    names = encode_blob([f"nas-bench-bert-{i}" for i in ids])
    loss = -glue[:, None]
    search = SearchTable(name="bert", ids=ids, train_loss=np.full((n, 1), np.nan), val_loss=loss.copy(),
                         wall_time_s=seconds[:, None], n_epochs=np.ones(n, dtype=np.int64),
                         status=np.array(["OK"] * n), num_params=_param_counts(folder, ids),
                         recipe_blob=recipes[0], recipe_offsets=recipes[1], log_name_blob=names[0],
                         log_name_offsets=names[1], space=space)
    checksum = hashlib.sha256(raw + (folder / SPACE_FILE).read_bytes()).hexdigest()
    return Benchmark(search=search, test_loss=loss, data_dir=folder, source=source, checksum=checksum,
                     cache_path=source)


def task_scores(benchmark) -> list[dict]:
    """Per row, the published per-task GLUE scores and their average (points), read from the source."""
    entries = {int(e["id"]): e for e in json.loads(Path(benchmark.source).read_text())}
    return [dict(entries[int(i)]["scores"]) for i in benchmark.search.ids]


def rows_of(search: SearchTable, arch) -> list[int]:
    """Rows evaluated with exactly the architecture `arch` (none, one, or two for a repeated one)."""
    return [k for k, evaluated in enumerate(architectures(search)) if evaluated == arch]


def same_configuration(benchmark, row: int) -> list[int]:
    """Ids of every row with the architecture of `row` (itself included), ascending."""
    return [int(benchmark.search.ids[k]) for k in rows_of(benchmark.search, architectures(benchmark.search)[row])]


MAX_ID = 10**12


def _checked_record(source: Path, index: int, entry) -> dict:
    """The fields one record of BERT_benchmark.json is used for, validated once on entry: `id` an
    integer, `completed` true, `time_to_train` a finite number of seconds > 0, `scores.glue` a number of
    GLUE points in [0, 100] (JSON strings and booleans are not numbers); DataError naming the record."""
    def fail(why: str):
        raise DataError(f"{source}: record {index} (id {entry.get('id') if isinstance(entry, dict) else '?'!s:.20}): {why}")

    def number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)

    if not isinstance(entry, dict):
        fail("not a JSON object")
    rid = entry.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int) or not 0 <= rid < MAX_ID:
        fail(f"id must be an integer in 0..{MAX_ID - 1}")
    if entry.get("completed") is not True:
        fail("completed is not true (an unfinished training has no final score)")
    seconds = entry.get("time_to_train")
    if not number(seconds) or seconds <= 0:
        fail(f"time_to_train must be a finite number of seconds > 0, got {seconds!r:.40}")
    scores = entry.get("scores")
    glue = scores.get("glue") if isinstance(scores, dict) else None
    if not number(glue) or not 0 <= glue <= 100:
        fail(f"scores.glue must be a number of GLUE points in [0, 100], got {glue!r:.40}")
    hparams = entry.get("hparams")
    overrides = hparams.get("model_hparam_overrides") if isinstance(hparams, dict) else None
    if not isinstance(overrides, dict):
        fail("hparams.model_hparam_overrides is missing")
    return {"id": rid, "glue": float(glue), "time_to_train": float(seconds), "overrides": overrides}


data_folder = bert_data_dir      # the catalog's loader interface: data_folder(data_dir), load(spec, data_dir, rebuild)


def load(spec, data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """The catalog's loader: NAS-Bench-BERT is read from its JSON each time (no packed cache)."""
    return load_bert_benchmark(data_dir)


def _param_counts(folder: Path, ids: np.ndarray) -> np.ndarray:
    """Parameter counts from the published metrics file (0 where it is absent)."""
    counts = np.zeros(len(ids), dtype=np.int64)
    path = folder / METRICS_FILE
    if not path.is_file():
        return counts
    row_of = {int(i): k for k, i in enumerate(ids)}
    with open(path, encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            try:
                counts[row_of[int(row["ID"])]] = int(float(row["Number of Parameters"]))
            except (KeyError, ValueError, TypeError):
                continue
    return counts


def test_losses(benchmark: Benchmark):
    """The scores regret measures: on NAS-Bench-BERT the one recorded GLUE score (as −GLUE) is both what
    the searcher sees after an evaluation and what regret measures."""
    return benchmark.search.val_loss.copy()
