"""HW-GPT-Bench's perplexity observations as single-evaluation benchmark tables (`gpt-s`, `gpt-m`, `gpt-l`).

Each line of `gpt_<s|m|l>_observations.jsonl` is one row, id = its line number (0-based). The score is
the perplexity of the sub-network on OpenWebText measured through the authors' weight-sharing
supernet: one number per architecture, no validation/test split, so the searcher and the regret see
the same number (the loss columns hold the perplexity itself; regret = perplexity - the table's
lowest, in perplexity points). There is no training time: one evaluation costs one unit of the
benchmark's clock, which counts evaluations (`--budget-evals`), and the table's one "epoch" column
holds 1.

The search space (choices) and the fixed parts of the architecture (`benchmarks.gpt.sizes`) come from
the supernet's evaluation config `owt_<s|m|l>_eval.yaml` beside it. The folder: `--data-dir`, else
`NASBENCH_GPT_DATA`, else `../shared/hw-gpt-bench` beside the repository. The parsed table is cached
(`$NASBENCH_CACHE/gpt-<s|m|l>-<checksum>.npz`) and rebuilt when the files change.
"""
from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError, UserError
from benchmarks.core.table import Benchmark, SearchTable, encode_blob
from benchmarks.gpt.sizes import SupernetConfig
from benchmarks.gpt.space import GPTSpace

ENV = "NASBENCH_GPT_DATA"
CACHE_VERSION = "2"   # 2: content digest; perplexity bounded by the vocabulary, unknown keys refused


def files(name: str) -> tuple[str, str]:
    """(observations file, evaluation config) of gpt-s/m/l."""
    size = name.split("-")[1]
    return f"gpt_{size}_observations.jsonl", f"owt_{size}_eval.yaml"


def data_folder(data_dir=None, name: str = "gpt-s") -> Path:
    """The HW-GPT-Bench folder: `data_dir`, else NASBENCH_GPT_DATA, else ../shared/hw-gpt-bench."""
    from benchmarks.core.paths import chosen_folder

    folder, how = chosen_folder(data_dir, ENV, "hw-gpt-bench")
    if not folder.is_dir():
        raise DataError(f"HW-GPT-Bench folder not found: {folder} (from {how}); pass --data-dir DIR or set {ENV}")
    return folder.resolve()


def read_model_section(path: Path) -> dict:
    """The `model:` mapping of an evaluation config (flat `key: value` lines; values are numbers,
    booleans, strings or [lists]); DataError naming the file if it has none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"HW-GPT-Bench evaluation config not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    model, inside = {}, False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            inside = line.split("#")[0].strip() == "model:"
            continue
        if inside and ":" in line:
            key, value = line.split("#")[0].split(":", 1)
            model[key.strip()] = _value(value.strip())
    if not model:
        raise DataError(f"{path}: no `model:` section")
    return model


def _value(text: str):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if text.startswith("["):
        return [_value(item.strip()) for item in text.strip("[]").split(",") if item.strip()]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip("'\"")


def space_and_config(name: str, config_path: Path) -> tuple[GPTSpace, SupernetConfig]:
    model = read_model_section(config_path)
    try:
        space = GPTSpace(tuple(sorted(int(v) for v in model["embed_choices"])),
                         tuple(sorted(int(v) for v in model["layer_choices"])),
                         tuple(sorted(int(v) for v in model["head_choices"])),
                         tuple(sorted(int(v) for v in model["mlp_ratio_choices"])),
                         tuple(bool(v) for v in model["bias_choices"]), name=name)
        config = SupernetConfig(int(model["padded_vocab_size"]), int(model["block_size"]), int(model["head_size"]),
                                int(model["n_head"]), int(model["n_query_groups"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{config_path}: the model section lacks or garbles {exc}") from None
    if model.get("lm_head_bias") or not model.get("shared_embedding", True) or model.get("_mlp_class") != "GptNeoxMLP" \
            or model.get("_norm_class") != "LayerNorm" or model.get("shared_attention_norm"):
        raise DataError(f"{config_path}: a model unlike HW-GPT-Bench's (shared embedding, no LM-head bias, "
                        "GptNeoxMLP, LayerNorm, two norms per layer); benchmarks.gpt.sizes would miscount it")
    return space, config


RECORD_KEYS = ("arch", "perplexity", "accuracy")


def parse_observations(name: str, path: Path, space: GPTSpace,
                       vocab_size: int | None = None) -> tuple[list, np.ndarray, np.ndarray]:
    """(architectures, perplexity, accuracy) of the JSON lines; DataError naming the file and line.

    A perplexity must lie in [1, vocab_size]: 1 is a model that is always sure and right, and the
    vocabulary size is a model that guesses uniformly (a sub-network of a trained supernet doing worse
    than that is a corrupt record, not a weak architecture). Unknown keys are refused, not ignored."""
    from benchmarks.core.json_lines import json_objects

    archs, ppl, acc, seen = [], [], [], {}
    for number, record in json_objects(path, "HW-GPT-Bench observations", skip_blank=True):
        unknown = sorted(set(record) - set(RECORD_KEYS))
        if unknown:
            raise DataError(f"{path} line {number}: unknown key {unknown[0]!r:.40} (a record holds "
                            f"{', '.join(RECORD_KEYS)})")
        try:
            arch = space.parse(record.get("arch"))
        except UserError as exc:
            raise DataError(f"{path} line {number}: {exc}") from None
        value, accuracy = record.get("perplexity"), record.get("accuracy")
        bound = vocab_size or math.inf
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not 1 <= value <= bound:
            limit = f" and at most the vocabulary size {vocab_size:,} (uniform guessing)" if vocab_size else ""
            raise DataError(f"{path} line {number}: perplexity must be a finite number >= 1{limit}, got {value!r:.40}")
        if isinstance(accuracy, bool) or not isinstance(accuracy, (int, float)) or not 0 <= accuracy <= 1:
            raise DataError(f"{path} line {number}: accuracy must be a number in [0, 1], got {accuracy!r:.40}")
        if arch in seen:
            raise DataError(f"{path} line {number}: the same architecture as line {seen[arch]} (after dropping the "
                            "padding of its per-layer lists)")
        seen[arch] = number
        archs.append(arch)
        ppl.append(float(value))
        acc.append(float(accuracy))
    if not archs:
        raise DataError(f"{path}: no observations")
    return archs, np.array(ppl), np.array(acc)


def load(spec, data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """The catalog's loader: gpt-s/m/l from the cache, else parsed from the JSON lines and cached."""
    from benchmarks.core.paths import cache_dir

    folder = data_folder(data_dir, spec.name)
    observations, config_file = (folder / f for f in files(spec.name))
    space, config = space_and_config(spec.name, config_file)
    try:
        raw = observations.read_bytes()
    except FileNotFoundError:
        raise DataError(f"HW-GPT-Bench observations not found: {observations}") from None
    checksum = hashlib.sha256(raw + config_file.read_bytes()).hexdigest()
    cache = cache_dir() / f"{spec.name}-{checksum[:16]}-v{CACHE_VERSION}.npz"
    arrays = None if rebuild_cache else _read_cache(cache, checksum)
    if arrays is None:
        archs, ppl, acc = parse_observations(spec.name, observations, space, config.vocab_size)
        from benchmarks.gpt.sizes import params

        recipes = encode_blob([a.to_json() for a in archs])
        arrays = {"perplexity": ppl, "accuracy": acc, "num_params": np.array([params(a, config) for a in archs]),
                  "recipe_blob": recipes[0], "recipe_offsets": recipes[1], "checksum": np.array(checksum)}
        _write_cache(cache, arrays)
    return _benchmark(spec.name, arrays, space, config, folder, observations, checksum, cache)


def _read_cache(path: Path, checksum: str):
    """The cached arrays if the file holds the sources' checksum and its arrays still match their own
    sha256 (`content_digest`: a perplexity edited in the cache is caught), else None (parsed again)."""
    from benchmarks.cells.packed_cache import array_digest

    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None
    if str(arrays.get("checksum")) != checksum:
        return None
    content = [k for k in arrays if k not in ("checksum", "content_digest")]
    if str(arrays.get("content_digest")) != array_digest(arrays, content):
        import sys

        print(f"nasbench: cache {path} is unusable (its arrays do not match their content_digest: edited?); "
              "rebuilding it", file=sys.stderr)
        return None
    return arrays


def _write_cache(path: Path, arrays: dict) -> None:
    from benchmarks.cells.packed_cache import array_digest
    from benchmarks.core.atomic import write_bytes_atomic

    arrays["content_digest"] = np.array(array_digest(arrays, [k for k in arrays if k != "checksum"]))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    try:
        write_bytes_atomic(path, buffer.getvalue())
    except OSError:
        pass                      # a read-only cache: parse again next time


def _benchmark(name, arrays, space, config, folder, source, checksum, cache) -> Benchmark:
    n = len(arrays["perplexity"])
    ids = np.arange(n, dtype=np.int64)
    loss = np.asarray(arrays["perplexity"], dtype=np.float64)[:, None]
    names = encode_blob([f"{name}-{i}" for i in range(n)])
    search = SearchTable(name=name, ids=ids, train_loss=np.full((n, 1), np.nan), val_loss=loss.copy(),
                         wall_time_s=np.ones((n, 1)), n_epochs=np.ones(n, dtype=np.int64),
                         status=np.array(["OK"] * n), num_params=np.asarray(arrays["num_params"], dtype=np.int64),
                         recipe_blob=arrays["recipe_blob"], recipe_offsets=arrays["recipe_offsets"],
                         log_name_blob=names[0], log_name_offsets=names[1], space=space)
    benchmark = Benchmark(search=search, test_loss=loss, data_dir=folder, source=source, checksum=checksum,
                          cache_path=cache)
    _EXTRA[id(search)] = (search, config, np.asarray(arrays["accuracy"], dtype=np.float64))
    return benchmark


_EXTRA: dict = {}


def supernet_config(search) -> SupernetConfig:
    """The fixed parts of the architecture of a gpt table (from its evaluation config)."""
    return _EXTRA[id(search)][1]


def accuracies(search) -> np.ndarray:
    """The published next-token accuracy of every row (0..1)."""
    return _EXTRA[id(search)][2]


def test_losses(benchmark: Benchmark):
    """The scores regret measures: the one published perplexity (what the searcher sees too)."""
    return benchmark.search.val_loss.copy()

