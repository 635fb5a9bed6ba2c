"""NMTLC's LoRA fine-tuning curves as multi-fidelity benchmarks (`lora-fr-en`, `lora-zh-en`).

Each `finetune` record of `nmtlc.jsonl` for the corpus is one row (in file order; id = its position among
the corpus's records): its configuration (benchmarks.lora.space), its dev perplexity at each checkpoint
(`perplexity_curve`, the fidelity: checkpoint k is "epoch" k) and its dev BLEU at each checkpoint
(`bleu_curve`, reported beside the perplexity, never searched on). A curve ends where early stopping
ended training; the run's result is then its lowest-perplexity checkpoint (the file's `perplexity_optimal`
equals the curve's minimum in all 321 fine-tuning records: the kept model). So the searcher's table holds,
past a curve's end up to the table's top checkpoint, that lowest perplexity at no cost (wall time 0): a run
asked for more checkpoints than it trained is a finished run with status OK, charged the checkpoints it
trained, whose perplexity at the top fidelity is that of the model early stopping kept. (Until 2026-11-27
such a run was reported "stopped early", a failure status, and searchers that train to the top fidelity
treated nearly every LoRA run as failed.) `curve_lengths` gives the checkpoints each run really trained.
The regret is unchanged by the padding: the padded value is the curve's own minimum.

Measured on the data (docs/results/nmt.md): curves of 13-74 checkpoints on fr-en (median 19) and 7-28 on
zh-en (median 15); the lowest perplexity falls at checkpoint 8 (fr-en) and 7 (zh-en) in the median, never at
the last on fr-en and at the last in 30 of 159 zh-en curves. No time per checkpoint is recorded, so every
checkpoint trained costs one unit of the clock, which counts checkpoints (`--budget-evals`).

Only dev numbers are published: the searcher and the regret read the same perplexity (regret = the
perplexity of the best-by-validation (configuration, checkpoint) - the table's lowest, in perplexity
points). The folder: `--data-dir` (the `hpo-nmt` folder), else `NASBENCH_NMT_DATA` (or its parent), else
`../shared/hpo-nmt`. The file is parsed at every load (2.3 MB, about 0.1 s).

The from-scratch NMTLC curves are not offered: in 2,068 of their 2,162 records the curve ends exactly 16
checkpoints after its minimum (early stopping with patience 16) and they are much shorter than their
`max_len` (median 18 of 133 points): they hold the end of training, not its start, so replaying them from
their first point would hand a searcher the converged model for the price of one checkpoint.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError, UserError
from benchmarks.core.table import Benchmark, SearchTable, encode_blob, immutable
from benchmarks.lora.space import BASE_MODELS, LoRASpace

ENV = "NASBENCH_NMT_DATA"
FILE = "nmtlc.jsonl"


def corpus_of(name: str) -> str:
    return name.split("-", 1)[1]


def data_folder(data_dir=None, name: str = "lora-fr-en") -> Path:
    """The folder holding nmtlc.jsonl: `data_dir`, else NASBENCH_NMT_DATA (or its parent, when it names
    `datasets/`), else ../shared/hpo-nmt."""
    from benchmarks.core.paths import chosen_folder

    folder, how = chosen_folder(data_dir, ENV, "hpo-nmt")
    if not (folder / FILE).is_file() and (folder.parent / FILE).is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise DataError(f"NMTLC folder not found: {folder} (from {how}); pass --data-dir DIR or set {ENV}")
    return folder.resolve()


def _curve(path, number, record, key) -> list[float]:
    curve = record.get(key)
    if not isinstance(curve, list) or not curve or any(isinstance(v, bool) or not isinstance(v, (int, float))
                                                       or not math.isfinite(v) for v in curve):
        raise DataError(f"{path} line {number}: {key} must be a non-empty list of finite numbers")
    return [float(v) for v in curve]


def parse_corpus(path: Path, name: str) -> dict:
    """The validated finetune records of one corpus: configurations, perplexity and BLEU curves."""
    space, corpus = LoRASpace(name), corpus_of(name)
    from benchmarks.core.json_lines import json_objects

    configs, ppl, bleu, seen = [], [], [], {}
    for number, record in json_objects(path, "NMTLC file"):
        if record.get("task") != "finetune" or record.get("dataset_name") != corpus:
            continue
        hp = record.get("hyperparams")
        if not isinstance(hp, dict):
            raise DataError(f"{path} line {number}: no hyperparams object")
        model = BASE_MODELS.get((record.get("basemodel"), hp.get("model_size"), hp.get("num_layers")))
        if model is None:
            raise DataError(f"{path} line {number}: unknown base model {record.get('basemodel')!r:.20} with "
                            f"model_size {hp.get('model_size')!r:.12}, num_layers {hp.get('num_layers')!r:.12}")
        try:
            config = space.parse({"base_model": model, "lora_rank": hp.get("r"), "batch_size": hp.get("batch_size"),
                                  "learning_rate": hp.get("initial_lr")})
        except UserError as exc:
            raise DataError(f"{path} line {number}: {exc}") from None
        if config in seen:
            raise DataError(f"{path} line {number}: the same configuration as line {seen[config]}")
        seen[config] = number
        curve, bleu_curve = _curve(path, number, record, "perplexity_curve"), _curve(path, number, record, "bleu_curve")
        if min(curve) < 1:
            raise DataError(f"{path} line {number}: a perplexity below 1 ({min(curve):g})")
        if len(bleu_curve) != len(curve) or not all(0 <= b <= 100 for b in bleu_curve):
            raise DataError(f"{path} line {number}: bleu_curve must hold one BLEU in [0, 100] per checkpoint")
        configs.append(config)
        ppl.append(curve)
        bleu.append(bleu_curve)
    if not configs:
        raise DataError(f"{path}: no finetune records of {corpus}")
    return {"space": space, "configs": configs, "ppl": ppl, "bleu": bleu,
            "checksum": hashlib.sha256(path.read_bytes()).hexdigest()}


def _matrix(curves, width) -> np.ndarray:
    out = np.full((len(curves), width), np.nan)
    for row, curve in enumerate(curves):
        out[row, :len(curve)] = curve
    return out


def load(spec, data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """The catalog's loader: one corpus's fine-tuning curves (parsed at every load; no cache)."""
    folder = data_folder(data_dir, spec.name)
    parsed = parse_corpus(folder / FILE, spec.name)
    n, width = len(parsed["configs"]), spec.max_epochs
    lengths = np.array([len(c) for c in parsed["ppl"]], dtype=np.int64)
    if lengths.max() > width:
        raise DataError(f"{folder / FILE}: a {spec.name} curve has {lengths.max()} checkpoints, more than the "
                        f"{width} its catalog entry allows")
    trained = np.arange(width)[None, :] < lengths[:, None]
    recorded = _matrix(parsed["ppl"], width)               # NaN past a curve's end
    loss = np.where(trained, recorded, np.nanmin(recorded, axis=1, keepdims=True))   # past it: the kept model
    recipes = encode_blob([c.to_json() for c in parsed["configs"]])
    names = encode_blob([f"{spec.name}-{i}" for i in range(n)])
    search = SearchTable(name=spec.name, ids=np.arange(n, dtype=np.int64), train_loss=np.full((n, width), np.nan),
                         val_loss=loss.copy(), wall_time_s=np.where(trained, 1.0, 0.0),
                         n_epochs=np.full(n, width, dtype=np.int64), status=np.array(["OK"] * n), num_params=np.zeros(n, dtype=np.int64),
                         recipe_blob=recipes[0], recipe_offsets=recipes[1], log_name_blob=names[0],
                         log_name_offsets=names[1], space=parsed["space"])
    _RECORDED[id(search)] = (search, immutable(_matrix(parsed["bleu"], width)), immutable(lengths))
    return Benchmark(search=search, test_loss=loss, data_dir=folder, source=folder / FILE,
                     checksum=parsed["checksum"], cache_path=None)


_RECORDED: dict = {}       # id(search) -> (search, BLEU curves, curve lengths) as the file records them


def _recorded(search) -> tuple:
    entry = _RECORDED.get(id(search))
    if entry is None or entry[0] is not search:
        raise UserError(f"{getattr(search, 'name', '?')} is not a loaded NMTLC table")
    return entry


def bleu_curves(search) -> np.ndarray:
    """[n, checkpoints] dev BLEU per checkpoint as recorded (NaN past a curve's end)."""
    return _recorded(search)[1]


def curve_lengths(search) -> np.ndarray:
    """[n] checkpoints each run trained before early stopping ended it (the table pads past them)."""
    return _recorded(search)[2]


def test_losses(benchmark: Benchmark):
    """The scores regret measures: the dev perplexity per checkpoint (what the searcher sees too)."""
    return benchmark.search.val_loss.copy()
