"""Snap a point of feature space to the nearest architecture by cosine distance.

Search in a continuous feature box (RE, TPE, SMAC) proposes vectors; an architecture is the row of
the feature matrix whose direction is closest (largest cosine similarity). The rows are normalised
once per feature matrix (cached by identity) and stored transposed, [d, n] contiguous, so each
query is one vector-matrix product (about twice as fast as the row-major product for n = 14,322).
"""
import numpy as np

_NORMALISED: dict = {}   # id(features) -> (features, unit rows transposed [d, n])


def _unit_columns(features: np.ndarray) -> np.ndarray:
    key = id(features)
    cached = _NORMALISED.get(key)
    if cached is not None and cached[0] is features:
        return cached[1]
    matrix = np.asarray(features, dtype=np.float64)
    if matrix.ndim != 2 or not np.isfinite(matrix).all():
        raise ValueError(f"features must be a finite [n, d] matrix, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit_t = np.ascontiguousarray((matrix / np.where(norms > 0, norms, 1.0)).T)
    if len(_NORMALISED) >= 8:
        _NORMALISED.clear()
    _NORMALISED[key] = (features, unit_t)
    return unit_t


def unit_rows(features: np.ndarray) -> np.ndarray:
    """`features` [n, d] with each row scaled to unit length (all-zero rows stay zero); cached per
    matrix (a read-only view: do not write to it)."""
    return _unit_columns(features).T


def cosine_similarities(features: np.ndarray, vector) -> np.ndarray:
    """Cosine similarity [n] of every row of `features` with `vector` (0 for a zero row or vector)."""
    vector = np.asarray(vector, dtype=np.float64).ravel()
    norm = np.linalg.norm(vector)
    return (vector / norm if norm > 0 else vector) @ _unit_columns(features)


def nearest_by_cosine(features: np.ndarray, vector, exclude=None) -> int:
    """Row index of `features` [n, d] nearest to `vector` [d] by cosine distance; ties -> lowest row.

    `exclude` (optional) removes rows from the choice: a boolean mask [n] (True = excluded) or an
    iterable of row indices. Raises ValueError when every row is excluded.
    """
    # The query's norm scales every similarity alike, so it does not change the argmax.
    sims = np.asarray(vector, dtype=np.float64).reshape(-1) @ _unit_columns(features)
    if exclude is not None:
        mask = _as_mask(exclude, len(sims))
        if mask.all():
            raise ValueError("nearest_by_cosine: every row is excluded")
        sims[mask] = -np.inf
    return int(sims.argmax())


def _as_mask(exclude, n: int) -> np.ndarray:
    if isinstance(exclude, np.ndarray) and exclude.dtype == bool:
        if exclude.shape != (n,):
            raise ValueError(f"exclude mask has shape {exclude.shape}, expected ({n},)")
        return exclude
    mask = np.zeros(n, dtype=bool)
    rows = np.fromiter((int(r) for r in exclude), dtype=np.int64)
    mask[rows] = True
    return mask


def space_and_snapper(inputs, name: str):
    """(the benchmark's search space, a `Snapper` over `inputs.features`) for an algorithm that searches
    the native space; UserError if the benchmark has no such space or the features are not its encoding."""
    from benchmarks.core.errors import UserError
    from benchmarks.core.space import Snapper

    space = getattr(inputs.search, "space", None)
    if space is None or inputs.features is None or inputs.features.shape[0] != inputs.search.n:
        raise UserError(f"{name} searches a benchmark's native space: it needs a search space and its encoding "
                        "(setting features = the space's encoding kind)")
    return space, Snapper(space, inputs.features, inputs.rng)
