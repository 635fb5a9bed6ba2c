"""How well training-free scores rank cells: correlations with the trained test loss, agreement with the
published per-cell values (Serianni & Kalita's RNN_results.csv), and small ablations over seeds.

Rank correlations are signed: a negative tau means a higher score goes with a lower test loss (the
direction the metrics are meant to have). The paper quotes absolute values.
"""
import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError
from benchmarks.core.paths import REPO_ROOT

# What the paper's text states (Kendall tau against test loss, absolute, 8,795 cells).
PAPER_TAU = {"hidden_covariance_l1": 0.37}
PAPER_MAX_OTHER_TAU = 0.28
ABLATION_CELLS = 10
ABLATION_REPEATS = 10


def published_dir() -> Path:
    return REPO_ROOT.parent / "shared" / "training-free-nas"


def _float(text: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


@dataclass(frozen=True)
class Published:
    """Per-cell values of RNN_results.csv: log names, final test loss and each metric we compute."""
    log_names: np.ndarray          # str [n]
    loss: np.ndarray               # float64 [n]
    values: dict                   # metric -> float64 [n]


def load_published(path=None) -> Published:
    """Read RNN_results.csv (columns by header name; the file starts with a byte-order mark)."""
    from benchmarks.proxies.metrics import PUBLISHED_COLUMN

    path = Path(path) if path is not None else published_dir() / "RNN_results.csv"
    if not path.is_file():
        raise DataError(f"published results not found: {path}")
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], [r for r in rows[1:] if r and r[0].startswith("log_stats_model_")]
    col = {name: i for i, name in enumerate(header)}
    missing = [c for c in ["log name", "loss", *PUBLISHED_COLUMN.values()] if c not in col]
    if missing:
        raise DataError(f"{path} lacks columns {missing}")
    return Published(
        log_names=np.array([r[col["log name"]] for r in body]),
        loss=np.array([_float(r[col["loss"]]) for r in body]),
        values={m: np.array([_float(r[col[c]]) for r in body]) for m, c in PUBLISHED_COLUMN.items()})


def load_published_params(path=None) -> tuple:
    """(loss, total parameters) per distinct log name of RNN_parameters.csv, whose header repeats
    with varying columns and which holds junk rows; returns two float64 arrays."""
    path = Path(path) if path is not None else published_dir() / "RNN_parameters.csv"
    if not path.is_file():
        raise DataError(f"published parameter counts not found: {path}")
    seen, loss, params, col = set(), [], [], None
    with open(path, encoding="utf-8-sig", newline="") as handle:
        for row in csv.reader(handle):
            if row and row[0] == "log name":
                col = {name: i for i, name in enumerate(row)}
                continue
            if col is None or not row or not row[0].startswith("log_stats_model_") or row[0] in seen:
                continue
            seen.add(row[0])
            loss.append(_float(row[col["loss"]]))
            params.append(_float(row[col["total paramters"]]))
    return np.array(loss), np.array(params)


def rank_correlation(x, y) -> dict:
    """Kendall tau-b and Spearman rho over the pairs where both are finite."""
    from scipy.stats import kendalltau, spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    if n < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return {"n": n, "tau": None, "rho": None}
    return {"n": n, "tau": float(kendalltau(x[ok], y[ok])[0]), "rho": float(spearmanr(x[ok], y[ok])[0])}


def correlation_table(benchmark, table, published: Published | None = None) -> list:
    """One dict per metric: vs final test loss on the paper's population (completed cells) and on all
    scored cells; the published CSV's own figures; agreement with the published per-cell values."""
    from benchmarks.proxies.build import completed_mask
    from benchmarks.proxies.metrics import METRICS

    search = benchmark.search
    loss = benchmark.final_test_loss
    completed = completed_mask(search)
    names = np.array(search.log_names)
    pub_row = {}
    if published is not None:
        pub_row = {name: i for i, name in enumerate(published.log_names)}
    matched = np.array([name in pub_row for name in names])
    pub_index = np.array([pub_row.get(name, -1) for name in names])
    pub_params = None
    rows = []
    for metric in METRICS:
        values = table.column(metric, search.ids)
        scored = np.isfinite(values)
        row = {"metric": metric, "scored": int(table.count(metric)), "finite": int(scored.sum()),
               "population": rank_correlation(np.where(completed, values, np.nan), loss),
               "all_scored": rank_correlation(values, loss), "paper_tau": PAPER_TAU.get(metric)}
        if published is not None and metric in published.values:
            pub_values = published.values[metric]
            row["published_csv"] = rank_correlation(pub_values, published.loss)
            ours = np.where(matched, values, np.nan)
            theirs = np.where(matched, pub_values[np.clip(pub_index, 0, None)], np.nan)
            both = np.isfinite(ours) & np.isfinite(theirs)
            row["published_same_cells"] = rank_correlation(np.where(both, theirs, np.nan), loss)
            row["ours_same_cells"] = rank_correlation(np.where(both, ours, np.nan), loss)
            row["ours_vs_published"] = rank_correlation(ours, theirs)
        elif metric == "num_params" and published is not None:
            if pub_params is None:
                try:
                    pub_params = load_published_params()
                except DataError:
                    pub_params = (np.array([]), np.array([]))
            row["published_csv"] = rank_correlation(pub_params[1], pub_params[0])
        rows.append(row)
    return rows


def ablation_rows(benchmark) -> np.ndarray:
    """The ablation's cells: the first completed cells of the fixed sampling order."""
    from benchmarks.proxies.build import sample_rows

    return sample_rows(benchmark.search, ABLATION_CELLS, completed_only=True)


def ablation_is_cached(benchmark, cache, kind: str, repeats: int = ABLATION_REPEATS) -> bool:
    """Whether the default ablation of `kind` is already fully computed in the cache folder."""
    rows = ablation_rows(benchmark)
    path = cache.path / f"ablation-{kind}-{len(rows)}x{repeats}.npz"
    try:
        with np.load(path) as data:
            return bool(np.array_equal(data["ids"], benchmark.search.ids[rows]) and data["done"].all())
    except Exception:  # noqa: BLE001 - missing or damaged: not cached
        return False


def run_ablation(benchmark, cache, kind: str, cells=None, repeats: int = ABLATION_REPEATS,
                 progress=None) -> dict:
    """Scores of `cells` (row indices) under `repeats` weight seeds ('weights': minibatch fixed to
    the cache's seed) or minibatch seeds ('minibatch': weights fixed). Cached per (kind, cells,
    repeats) in the cache folder and resumed cell by cell. Returns {ids, metrics, values [c, r, k]}."""
    import json

    from benchmarks.core.atomic import save_npz_atomic
    from benchmarks.proxies.metrics import METRICS, score_recipe
    from benchmarks.proxies.minibatch import load_corpus

    if kind not in ("weights", "minibatch"):
        raise ValueError(kind)
    rows = ablation_rows(benchmark) if cells is None else np.asarray(cells)
    ids = benchmark.search.ids[rows]
    path = cache.path / f"ablation-{kind}-{len(rows)}x{repeats}.npz"
    values = np.full((len(rows), repeats, len(METRICS)), np.nan)
    done = np.zeros(len(rows), dtype=bool)
    if path.is_file():
        try:
            with np.load(path) as data:
                if np.array_equal(data["ids"], ids) and data["values"].shape == values.shape:
                    values, done = data["values"].copy(), data["done"].copy()
        except Exception:  # noqa: BLE001 - a damaged ablation file is recomputed
            pass
    corpus = None
    for c, row in enumerate(rows):
        if done[c]:
            continue
        if corpus is None:
            import torch

            torch.set_num_threads(1)
            corpus = load_corpus(benchmark.name)
        recipe = json.loads(benchmark.search.recipes[row])
        for r in range(repeats):
            seed, batch_seed = (cache.seed + 1 + r, cache.seed) if kind == "weights" else \
                               (cache.seed, cache.seed + 1 + r)
            scores, _ = score_recipe(recipe, corpus, METRICS, seed=seed, batch_seed=batch_seed,
                                     batch_size=cache.batch_size, seq_len=cache.seq_len, split=cache.split)
            values[c, r] = [scores[m] for m in METRICS]
            if progress is not None:
                progress(c * repeats + r + 1, len(rows) * repeats)
        done[c] = True
        save_npz_atomic(path, ids=ids, values=values, done=done, metrics=np.array(METRICS))
    return {"ids": ids, "metrics": METRICS, "values": values, "path": str(path)}


def ablation_summary(result) -> list:
    """Per metric: spread across repeats within a cell vs spread between cells.

    within_sd: mean over cells of the standard deviation over repeats; between_sd: standard deviation
    over cells of the per-cell means; ratio = within/between (small = the cell decides the score);
    rank_stability: mean Kendall tau between the cells' orderings under two different repeats.
    """
    from scipy.stats import kendalltau

    values = result["values"]
    out = []
    for k, metric in enumerate(result["metrics"]):
        v = values[:, :, k]
        ok_cells = np.all(np.isfinite(v), axis=1)
        v = v[ok_cells]
        if len(v) < 2:
            out.append({"metric": metric, "cells": int(len(v)), "within_sd": None, "between_sd": None,
                        "ratio": None, "rank_stability": None})
            continue
        within = float(np.mean(np.std(v, axis=1, ddof=1)))
        between = float(np.std(v.mean(axis=1), ddof=1))
        taus = []
        for a in range(v.shape[1]):
            for b in range(a + 1, v.shape[1]):
                if np.ptp(v[:, a]) > 0 and np.ptp(v[:, b]) > 0:
                    taus.append(kendalltau(v[:, a], v[:, b])[0])
        out.append({"metric": metric, "cells": int(len(v)), "within_sd": within, "between_sd": between,
                    "ratio": within / between if between > 0 else None,
                    "rank_stability": float(np.mean(taus)) if taus else None})
    return out
