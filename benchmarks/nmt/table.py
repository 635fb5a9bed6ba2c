"""NMTHPO's six translation tables (`nmt-en-ja`, `nmt-ja-en`, `nmt-ru-en`, `nmt-so-en`, `nmt-sw-en`,
`nmt-zh-en`) as single-evaluation benchmark tables.

Each pair has four files in `datasets/` with one line per trained system, aligned by line: `.hyps` (the
six hyperparameters), `.hyps_scaled` (the same in [0, 1]), `.evals` (dev BLEU, dev decode time, dev
perplexity, training updates, GPU memory, parameters) and `.fronts` (1 where the system is
Pareto-optimal for BLEU up and decode time down). Row k is line k + 1; its id is k.

The score is the dev BLEU, maximised. Only dev-set numbers are published, so the searcher and the regret
see the same number (as on gpt-*): the loss columns hold -BLEU, and regret = best BLEU of the table -
BLEU of the incumbent, in BLEU points. The data records no training time: the clock counts evaluations;
the cost-aware variants `nmt-<pair>-updates` charge each evaluation its recorded training updates instead.

Units, from the authors' extraction code (Sockeye logs): `decode_s` is the "Total time" Sockeye's
translate reports for decoding the dev set on one GPU, in seconds; `memory` the GPU memory Sockeye logged
during training (nvidia-smi's used memory, MiB), 0 where it was not recorded (the upstream README: drop
those when using memory), read here as unknown (NaN), never as 0.

The folder: `--data-dir` (the `hpo-nmt` folder holding `datasets/`, or `datasets/` itself), else
`NASBENCH_NMT_DATA`, else `../shared/hpo-nmt` beside the repository. The files are small (at most 34 kB a
pair) and parsed on every load, so no cache is kept.
"""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError, UserError
from benchmarks.core.table import Benchmark, SearchTable, encode_blob
from benchmarks.nmt.space import HYPERPARAMETERS, NMTSpace

ENV = "NASBENCH_NMT_DATA"
SUFFIXES = ("hyps", "hyps_scaled", "evals", "fronts")
EVALS = ("dev_bleu", "dev_gpu_time", "dev_ppl", "num_updates", "gpu_memory", "num_param")   # `.evals` columns
SCALED_TOLERANCE = 5e-4   # `.hyps_scaled` is rounded upstream (to 3-4 decimals: 0.429 for 3/7)


def pair_of(name: str) -> str:
    """'nmt-zh-en' (or the cost-aware 'nmt-zh-en-updates') -> 'zh-en'."""
    from benchmarks.core.catalog import NMT_COST_SUFFIX

    return name.split("-", 1)[1].removesuffix(NMT_COST_SUFFIX)


def data_folder(data_dir=None, name: str = "nmt-zh-en") -> Path:
    """The folder holding the pair files: `data_dir` (or its `datasets/`), else NASBENCH_NMT_DATA, else
    ../shared/hpo-nmt/datasets."""
    from benchmarks.core.paths import chosen_folder

    folder, how = chosen_folder(data_dir, ENV, "hpo-nmt")
    if (folder / "datasets").is_dir():
        folder = folder / "datasets"
    if not folder.is_dir():
        raise DataError(f"NMTHPO folder not found: {folder} (from {how}); pass --data-dir DIR or set {ENV}")
    return folder.resolve()


def _numbers(path: Path, columns: int) -> list[tuple[int, list[float]]]:
    """(line number, values) of each line of a whitespace-separated numeric file; DataError naming the
    file and line for a missing file, a wrong column count or a value that is not a finite number."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"NMTHPO file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            raise DataError(f"{path} line {number}: an empty line (the four files of a pair are aligned by line)")
        fields = line.split()
        if len(fields) != columns:
            raise DataError(f"{path} line {number}: {len(fields)} fields, expected {columns}")
        try:
            values = [float(f) for f in fields]
        except ValueError:
            bad = next(f for f in fields if not _is_number(f))
            raise DataError(f"{path} line {number}: {bad!r:.40} is not a number") from None
        if not all(math.isfinite(v) for v in values):
            raise DataError(f"{path} line {number}: a value is not finite")
        rows.append((number, values))
    if not rows:
        raise DataError(f"{path}: no systems")
    return rows


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _check_evals(path: Path, number: int, values: list[float]) -> None:
    bleu, decode, ppl, updates, memory, params = values
    problems = [(not 0 <= bleu <= 100, f"dev_bleu must be in [0, 100] BLEU points, got {bleu:g}"),
                (not decode > 0, f"dev_gpu_time must be > 0 seconds, got {decode:g}"),
                (not ppl >= 1, f"dev_ppl must be >= 1, got {ppl:g}"),
                (not (updates > 0 and updates == int(updates)), f"num_updates must be a whole number > 0, got {updates:g}"),
                (not (memory >= 0 and memory == int(memory)), f"gpu_memory must be a whole number of MiB >= 0 "
                                                               f"(0: not recorded), got {memory:g}"),
                (not (params > 0 and params == int(params)), f"num_param must be a whole number > 0, got {params:g}")]
    for bad, message in problems:
        if bad:
            raise DataError(f"{path} line {number}: {message}")


def parse_pair(folder: Path, name: str) -> dict:
    """The validated arrays of one pair: configurations, their encodings and the six `.evals` columns."""
    pair = pair_of(name)
    space = NMTSpace(pair, name)
    paths = {suffix: folder / f"{pair}.{suffix}" for suffix in SUFFIXES}
    hyps = _numbers(paths["hyps"], len(HYPERPARAMETERS))
    scaled = _numbers(paths["hyps_scaled"], len(HYPERPARAMETERS))
    evals = _numbers(paths["evals"], len(EVALS))
    fronts = _numbers(paths["fronts"], 1)
    counts = {suffix: len(rows) for suffix, rows in zip(SUFFIXES, (hyps, scaled, evals, fronts))}
    if len(set(counts.values())) != 1:
        raise DataError(f"{folder}/{pair}.*: the four files are not aligned: "
                        + ", ".join(f"{count} lines in .{suffix}" for suffix, count in counts.items()))
    configs, seen = [], {}
    for (number, values), (_, scaled_values) in zip(hyps, scaled):
        try:
            config = space.parse(dict(zip(HYPERPARAMETERS, values)))
        except UserError as exc:
            raise DataError(f"{paths['hyps']} line {number}: {exc}") from None
        if config in seen:
            raise DataError(f"{paths['hyps']} line {number}: the same configuration as line {seen[config]}")
        seen[config] = number
        if np.abs(space.encode(config) - np.array(scaled_values)).max() > SCALED_TOLERANCE:
            raise DataError(f"{paths['hyps_scaled']} line {number}: does not scale line {number} of .hyps "
                            "(the upstream scaling, within its rounding)")
        configs.append(config)
    for number, values in evals:
        _check_evals(paths["evals"], number, values)
    for number, (flag,) in fronts:
        if flag not in (0, 1):
            raise DataError(f"{paths['fronts']} line {number}: must be 0 or 1, got {flag:g}")
    columns = np.array([values for _, values in evals], dtype=np.float64)
    checksum = hashlib.sha256(b"".join(paths[s].read_bytes() for s in SUFFIXES)).hexdigest()
    return {"space": space, "configs": configs, "evals": columns, "checksum": checksum,
            "published_front": np.array([flag for _, (flag,) in fronts], dtype=bool), "source": paths["evals"]}


def load(spec, data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """The catalog's loader: one pair's table (parsed and validated on every load; no cache)."""
    folder = data_folder(data_dir, spec.name)
    parsed = parse_pair(folder, spec.name)
    evals = parsed["evals"]
    n = len(evals)
    loss = -evals[:, 0:1].copy()                      # -BLEU: the loss columns are minimised
    recipes = encode_blob([c.to_json() for c in parsed["configs"]])
    names = encode_blob([f"{spec.name}-{i}" for i in range(n)])
    search = SearchTable(name=spec.name, ids=np.arange(n, dtype=np.int64), train_loss=np.full((n, 1), np.nan),
                         val_loss=loss.copy(), wall_time_s=_cost(spec, evals), n_epochs=np.ones(n, dtype=np.int64),
                         status=np.array(["OK"] * n), num_params=evals[:, 5].astype(np.int64),
                         recipe_blob=recipes[0], recipe_offsets=recipes[1], log_name_blob=names[0],
                         log_name_offsets=names[1], space=parsed["space"])
    from benchmarks.core.table import immutable

    memory = np.where(evals[:, 4] > 0, evals[:, 4], np.nan)
    _EXTRA[id(search)] = (search, {"decode_s": immutable(evals[:, 1].copy()), "ppl": immutable(evals[:, 2].copy()),
                                   "updates": immutable(evals[:, 3].copy()), "memory": immutable(memory),
                                   "published_front": immutable(parsed["published_front"])})
    return Benchmark(search=search, test_loss=loss, data_dir=folder, source=parsed["source"],
                     checksum=parsed["checksum"], cache_path=None)


_EXTRA: dict = {}


def _cost(spec, evals: np.ndarray) -> np.ndarray:
    """What one evaluation of each system costs on the benchmark's clock, (n, 1): 1 (clock "evaluations"),
    or its recorded training updates (clock "updates", the cost-aware variants)."""
    if spec.clock == "updates":
        return evals[:, 3:4].copy()
    return np.ones((len(evals), 1))


def recorded(search, name: str) -> np.ndarray:
    """A recorded per-system column of an nmt table: decode_s (seconds), ppl, updates, memory (MiB, NaN
    where not recorded), published_front (bool: the `.fronts` file)."""
    entry = _EXTRA.get(id(search))
    if entry is None or entry[0] is not search:
        raise UserError(f"{getattr(search, 'name', '?')} is not a loaded NMTHPO table")
    return entry[1][name]


def test_losses(benchmark: Benchmark):
    """The scores regret measures: -dev BLEU (what the searcher sees too; no test split is published)."""
    return benchmark.search.val_loss.copy()
