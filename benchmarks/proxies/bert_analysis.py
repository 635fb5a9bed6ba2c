"""NAS-Bench-BERT's published training-free scores (Serianni & Kalita, 2023) against GLUE.

`BERT_results_activation.csv` holds, for each of the 500 FlexiBERT architectures (column `ID`), its GLUE
average and each training-free metric the paper computed, raw and normalised; `BERT_benchmark.json`
holds the per-task GLUE scores (points, higher is better) of the same ids. Correlations are Kendall
tau-b and Spearman rho of each metric against the GLUE average and against each task; a positive tau
means a higher score goes with a better model. The paper's text gives tau 0.44 for the parameter count.
"""
import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError
from benchmarks.proxies.analysis import _float, published_dir, rank_correlation

PAPER_PARAMS_TAU = 0.44
TASKS = ("cola", "mnli", "mrpc", "qnli", "qqp", "rte", "sst", "sts")


@dataclass(frozen=True)
class BertResults:
    """Per-architecture values in `ids` order: GLUE average, task scores and training-free metrics."""
    ids: np.ndarray            # int64 [500]
    glue: np.ndarray           # float64 [500], GLUE points
    tasks: dict                # task -> float64 [500], points
    metrics: dict              # CSV column name -> float64 [500], in the file's column order


def load_bert_results(folder=None) -> BertResults:
    """Read and cross-check the two published files (DataError, one line, if either is missing or
    they disagree on ids or GLUE averages)."""
    folder = Path(folder) if folder is not None else published_dir()
    csv_path, json_path = folder / "BERT_results_activation.csv", folder / "BERT_benchmark.json"
    for path in (csv_path, json_path):
        if not path.is_file():
            raise DataError(f"NAS-Bench-BERT file not found: {path}")
    with open(csv_path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "ID" not in rows[0] or "GLUE Score" not in rows[0]:
        raise DataError(f"{csv_path} lacks the columns 'ID' and 'GLUE Score'")
    try:
        ids = np.array([int(r["ID"]) for r in rows])
        entries = {int(e["id"]): e for e in json.loads(json_path.read_text())}
        tasks = {t: np.array([float(entries[i]["scores"][t]) for i in ids]) for t in TASKS}
        json_glue = np.array([float(entries[i]["scores"]["glue"]) for i in ids])
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{json_path} does not match {csv_path.name}: {type(exc).__name__}: {exc}") from None
    glue = np.array([_float(r["GLUE Score"]) for r in rows])
    if len(set(ids.tolist())) != len(ids) or not np.allclose(glue, json_glue):
        raise DataError(f"{csv_path.name} and {json_path.name} disagree on ids or GLUE averages")
    names = [c for c in rows[0] if c not in ("ID", "GLUE Score")]
    metrics = {name: np.array([_float(r[name]) for r in rows]) for name in names}
    return BertResults(ids=ids, glue=glue, tasks=tasks, metrics=metrics)


def bert_correlations(results: BertResults) -> dict:
    """{"metrics": [{metric, glue: {n, tau, rho}, tasks: {task: {n, tau, rho}}}], "tasks": {task: corr
    of the task with the GLUE average}}."""
    rows = [{"metric": name, "glue": rank_correlation(values, results.glue),
             "tasks": {t: rank_correlation(values, results.tasks[t]) for t in TASKS}}
            for name, values in results.metrics.items()]
    return {"architectures": len(results.ids), "paper_params_tau": PAPER_PARAMS_TAU, "metrics": rows,
            "tasks": {t: rank_correlation(results.tasks[t], results.glue) for t in TASKS}}
