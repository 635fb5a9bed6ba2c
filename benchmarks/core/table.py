"""The benchmark as arrays: what a searcher may see (`SearchTable`) and the harness side (`Benchmark`).

Losses are log-perplexities per epoch, wall times seconds per epoch; both `[n_arch, max_epochs]`
float64 with NaN past the epochs a log recorded. Test losses exist only on `Benchmark`, never on
`SearchTable`, so an optimizer that is handed a `SearchTable` cannot read them.
"""
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from benchmarks.core.errors import UserError


def decode_blob(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Strings packed as one utf-8 byte array with `offsets` [n + 1]."""
    raw = blob.tobytes()
    return [raw[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(len(offsets) - 1)]


def encode_blob(strings) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(e) for e in encoded])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


ARRAY_FIELDS = ("ids", "train_loss", "val_loss", "wall_time_s", "n_epochs", "status", "num_params", "recipe_blob",
                "recipe_offsets", "log_name_blob", "log_name_offsets", "shipped_features")


def immutable(array):
    """`array` over memory nothing in this process can write: a copy whose buffer is an immutable `bytes`
    object, so numpy refuses to set its WRITEABLE flag again (a read-only *view* of a writable array
    can be switched back, and a plugin did so through `gc`). Already-immutable arrays and None are
    returned as they are. Object arrays cannot be frozen this way and are returned as read-only views."""
    if not isinstance(array, np.ndarray) or is_immutable(array):
        return array
    if array.dtype.hasobject:
        view = array.view()
        view.flags.writeable = False
        return view
    return np.frombuffer(np.ascontiguousarray(array).tobytes(), dtype=array.dtype).reshape(array.shape)


def is_immutable(array) -> bool:
    """Whether `array`'s memory is an immutable `bytes` object (see `immutable`)."""
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return isinstance(base, bytes)


def _read_only(obj, names) -> None:
    """Replace each array attribute in `names` by an `immutable` copy: a plugin that writes into what it
    was handed, or switches an array's WRITEABLE flag back on, cannot change what later trials in the
    same process (other algorithms' included) see; the write fails its own trial."""
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, np.ndarray):
            setattr(obj, name, immutable(value))


class _Rows:
    """Rows of a table: ids, recipes and their lookups (shared by the searcher's and the harness's tables)."""

    @property
    def n(self) -> int:
        return len(self.ids)

    @cached_property
    def recipes(self) -> tuple[str, ...]:
        """Recipe JSON strings in row order (a tuple: shared by every trial in this process)."""
        return tuple(decode_blob(self.recipe_blob, self.recipe_offsets))

    def recipe(self, index: int) -> dict:
        """The architecture of row `index` as its recipe dict (ptb/wt2: `{node: {"op": ..., "input": [...]}}`)."""
        start, end = self.recipe_offsets[index], self.recipe_offsets[index + 1]
        return json.loads(self.recipe_blob[start:end].tobytes())

    @cached_property
    def _row_of_id(self) -> dict:
        return {int(rid): row for row, rid in enumerate(self.ids)}

    def index_of(self, recepie_id) -> int:
        """Row index of a recepie_id; UserError if the benchmark has no such architecture."""
        try:
            return self._row_of_id[int(recepie_id)]
        except (KeyError, ValueError, TypeError):
            raise UserError(f"unknown architecture id {recepie_id!r} in benchmark '{self.name}' "
                            f"(ids run from {self.ids[0]} to {self.ids[-1]}, {self.n} in all)") from None

    def indices_of(self, recepie_ids) -> np.ndarray:
        return np.array([self.index_of(r) for r in recepie_ids], dtype=np.int64)

    def check_index(self, index) -> int:
        """`index` as an int row index; UserError if out of range."""
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
                or not 0 <= index < self.n:
            raise UserError(f"architecture index {index!r} is out of range for '{self.name}' (0..{self.n - 1})")
        return int(index)


ARCHITECTURE_FIELDS = ("ids", "num_params", "recipe_blob", "recipe_offsets", "shipped_features")


@dataclass(eq=False)
class ArchitectureTable(_Rows):
    """What a searcher is handed (`inputs.search`): what a real searcher knows before training anything.
    Ids, parameter counts, recipes (architectures), the epochs available, the shipped features and the
    search space; no losses and no times: those arrive in observations, for the epochs paid for. Every
    array is read-only."""
    name: str
    ids: np.ndarray            # int64 [n], recepie_id, ascending
    num_params: np.ndarray     # int64 [n]
    recipe_blob: np.ndarray = field(repr=False)
    recipe_offsets: np.ndarray = field(repr=False)
    max_epochs: int = 1        # epochs an architecture can be trained for (ptb/wt2: 50; bert: its one evaluation)
    shipped_features: np.ndarray | None = None   # float64 [n, 10] (ptb only)
    space: object | None = None   # its search space (benchmarks.core.space.SearchSpace)

    def __post_init__(self):
        _read_only(self, ARCHITECTURE_FIELDS)

    def __setstate__(self, state):          # unpickled (a Dask worker): arrays come back writable
        self.__dict__.update(state)
        _read_only(self, ARCHITECTURE_FIELDS)


@dataclass(eq=False)
class SearchTable(_Rows):
    """The harness's table of a benchmark: ids, recipes, validation/train losses, wall times, status (no
    test losses). Searchers get its `searcher_view`, which holds no curves."""
    name: str
    ids: np.ndarray            # int64 [n], recepie_id, ascending
    train_loss: np.ndarray     # float64 [n, max_epochs], log-perplexity
    val_loss: np.ndarray       # float64 [n, max_epochs], log-perplexity
    wall_time_s: np.ndarray    # float64 [n, max_epochs], seconds per epoch
    n_epochs: np.ndarray       # int64 [n], epochs recorded in the log
    status: np.ndarray         # str [n]
    num_params: np.ndarray     # int64 [n]
    recipe_blob: np.ndarray = field(repr=False)
    recipe_offsets: np.ndarray = field(repr=False)
    log_name_blob: np.ndarray = field(repr=False)
    log_name_offsets: np.ndarray = field(repr=False)
    shipped_features: np.ndarray | None = None   # float64 [n, 10] (ptb only); NaN rows: ids the CSV lacks
    space: object | None = None   # its search space (benchmarks.core.space.SearchSpace: CellSpace, FlexiBertSpace)
    features_extra_rows: int = 0  # rows of the features CSV whose id has no log (ignored)

    def __post_init__(self):
        _read_only(self, ARRAY_FIELDS)

    def __setstate__(self, state):          # unpickled (a Dask worker): arrays come back writable
        self.__dict__.update(state)
        _read_only(self, ARRAY_FIELDS)

    @property
    def max_epochs(self) -> int:
        return self.val_loss.shape[1]

    @cached_property
    def searcher_view(self) -> ArchitectureTable:
        """What searchers are handed: this table without its curves (the same arrays, one view per table)."""
        return ArchitectureTable(name=self.name, ids=self.ids, num_params=self.num_params,
                                 recipe_blob=self.recipe_blob, recipe_offsets=self.recipe_offsets,
                                 max_epochs=self.max_epochs, shipped_features=self.shipped_features,
                                 space=self.space)

    @cached_property
    def log_names(self) -> tuple[str, ...]:
        """Log file names (`log_stats_model_<id>_....json`) in row order (a tuple)."""
        return tuple(decode_blob(self.log_name_blob, self.log_name_offsets))


@dataclass(eq=False)
class Benchmark:
    """A loaded benchmark: the harness's `search` table plus test losses, which only the harness reads.
    `test_loss` is None in a benchmark loaded for running searchers (`load_benchmark(...,
    test_losses=False)`): a trial then reads them only after its algorithm has finished."""
    search: SearchTable
    test_loss: np.ndarray | None   # float64 [n, max_epochs], log-perplexity
    data_dir: Path
    source: Path
    checksum: str              # sha256 of the source files, computed when the cache was built
    cache_path: Path
    dropped_logs: tuple = ()   # duplicate logs of an id already present (kept: first by file name)

    @property
    def name(self) -> str:
        return self.search.name

    @cached_property
    def final_test_loss(self) -> np.ndarray:
        """Test log-perplexity at the last recorded epoch [n]; NaN if none or not finite."""
        last = np.clip(self.search.n_epochs - 1, 0, None)
        values = self.test_loss[np.arange(self.search.n), last].copy()
        values[(self.search.n_epochs == 0) | ~np.isfinite(values)] = np.nan
        return values

    @cached_property
    def _best(self) -> tuple[float, int, int]:
        finite = np.where(np.isfinite(self.test_loss), self.test_loss, np.inf)
        row, col = np.unravel_index(np.argmin(finite), finite.shape)
        return float(finite[row, col]), int(row), int(col) + 1

    @property
    def l_star(self) -> float:
        """L*: the lowest finite test log-perplexity over all architectures and epochs."""
        return self._best[0]

    @property
    def best_index(self) -> int:
        return self._best[1]

    @property
    def best_id(self) -> int:
        """recepie_id of the architecture holding L*."""
        return int(self.search.ids[self._best[1]])

    @property
    def best_epoch(self) -> int:
        return self._best[2]
