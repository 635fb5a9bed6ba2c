"""Training-free score tables shipped with the package, so proxy-guided search runs on a fresh install.

`nasbench proxies build` made each file (`scripts/ship_scores.py` copies a full table from the cache
into the package), and a test rescores a seeded sample of cells from scratch and finds the shipped
values (exactly on the CPU type they were made on, within a measured float32 tolerance elsewhere:
docs/howto/custom-data.md). A file holds, per cell: `ids` (int64 recepie_id), `recipe_sha` (uint64: the first 8
bytes of the SHA-256 of the log's recipe string, so a custom data folder whose id means another cell
does not get that cell's score) and `values` (float64, the metric; -inf: scored but not finite), plus
`provenance`, a JSON string: benchmark, metric, split, seed, minibatch, metric code version, the
corpus checksum and the command that made it. `MANIFEST.json` beside them pins each file's SHA-256;
a file that does not match is refused with one line (DataError), never read silently.
"""
import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped_scores"

MANIFEST_NAME = "MANIFEST.json"     # {file name: SHA-256 of the file}


def shipped_name(benchmark: str, metric: str, config: str) -> str:
    """File name of a shipped table: benchmark, metric and the cache's configuration name."""
    return f"{benchmark}-{metric}-{config}.npz"


def recipe_hashes(recipes) -> np.ndarray:
    """uint64 [n]: the first 8 bytes (big-endian) of each recipe string's SHA-256."""
    return np.array([int.from_bytes(hashlib.sha256(r.encode("utf-8")).digest()[:8], "big") for r in recipes],
                    dtype=np.uint64)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def manifest() -> dict:
    path = SHIPPED_DIR / MANIFEST_NAME
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as exc:
        raise DataError(f"shipped score manifest {path} is unreadable ({exc}); reinstall nasbench") from None


@lru_cache(maxsize=8)
def _load(name: str):
    path = SHIPPED_DIR / name
    expected = manifest().get(name)
    if expected is None or not path.is_file():
        return None
    if file_sha256(path) != expected:
        raise DataError(f"shipped score table {path} does not match its checksum (damaged install?); "
                        "reinstall nasbench, or rebuild the scores with `nasbench proxies build`")
    with np.load(path, allow_pickle=False) as data:
        table = {k: data[k] for k in ("ids", "recipe_sha", "values")}
        table["provenance"] = json.loads(str(data["provenance"]))
    return table


def shipped_table(benchmark: str, metric: str, config: str):
    """The shipped table ({ids, recipe_sha, values, provenance}) for this configuration, or None."""
    return _load(shipped_name(benchmark, metric, config))


def shipped_values(search, metric: str, config: str):
    """(float64 [n] in `search` row order, NaN where the shipped table has no cell with that id and
    recipe; the provenance dict), or (None, None) when nothing is shipped for this configuration."""
    table = shipped_table(search.name, metric, config)
    if table is None:
        return None, None
    row_of = {int(rid): i for i, rid in enumerate(table["ids"])}
    rows = np.array([row_of.get(int(rid), -1) for rid in search.ids], dtype=np.int64)
    known = rows >= 0
    if known.any():
        hashes = recipe_hashes([search.recipes[i] for i in np.flatnonzero(known)])
        same = hashes == table["recipe_sha"][rows[known]]
        known[np.flatnonzero(known)[~same]] = False
    out = np.full(search.n, np.nan)
    out[known] = table["values"][rows[known]]
    return out, table["provenance"]
