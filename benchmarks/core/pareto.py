"""Pareto fronts and hypervolume of a benchmark for a set of objectives and constraints.

Everything here is in minimisation form (`benchmarks.core.objectives.minimised`). An architecture's
point is its loss at its best epoch plus its per-architecture objectives; for the true front the loss
is its lowest finite test loss over epochs (as L* is defined), for a trial's front its lowest
validation loss among the epochs it trained.

Normalisation (fixed per benchmark, objective set and constraints, recorded in every result file as
`hv_space`): each objective is mapped by (value - lower) / (upper - lower), with `lower` the ideal
point and `upper` the nadir point of the true front (its best and worst value of each objective); an
objective whose true front has a single value gets upper = lower + 1. The reference point is 1.1 in
every normalised objective (points beyond it add no volume), so the true front's extreme points count
too. Hypervolume: moocore (the reference implementation of the attainment-function literature).
"""
from dataclasses import dataclass, field

import numpy as np

from benchmarks.core.errors import UserError

REFERENCE = 1.1        # reference point, in every normalised objective


def require_moocore():
    """moocore, or UserError (one line) saying how to install it."""
    try:
        import moocore
    except ImportError:
        raise UserError("multi-objective runs need moocore: pip install 'nasbench[mo]' "
                        "(in a clone: pip install -e '.[mo]')") from None
    return moocore


def hypervolume(points, reference) -> float:
    """Hypervolume dominated by `points` [m, k] (minimised, normalised) up to `reference` [k]; 0 for none."""
    points = np.asarray(points, dtype=np.float64)
    if points.size == 0:
        return 0.0
    if points.ndim == 2 and points.shape[1] == 1:     # one objective (a constrained run): a length, no moocore
        lowest, ref = float(points[:, 0].min()), float(np.asarray(reference, dtype=np.float64).reshape(-1)[0])
        return ref - lowest if lowest < ref else 0.0
    moocore = require_moocore()
    return float(moocore.hypervolume(points, ref=np.asarray(reference, dtype=np.float64)))


def nondominated(points) -> np.ndarray:
    """Boolean mask [m] of the points no other point dominates (equal points are all kept)."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) == 0:
        return np.zeros(0, dtype=bool)
    if points.ndim == 2 and points.shape[1] == 1:     # one objective (a constrained run): the minima, no moocore
        return points[:, 0] == points[:, 0].min()
    moocore = require_moocore()
    return np.asarray(moocore.is_nondominated(points, keep_weakly=True), dtype=bool)


@dataclass(frozen=True, eq=False)
class ObjectiveSpace:
    """A benchmark's objectives and constraints, with its true front and the normalisation fixed by it."""
    benchmark: str
    objectives: tuple            # objective names, the record's order
    constraints: tuple           # benchmarks.core.constraints.Constraint
    static: np.ndarray = field(repr=False)      # [n, k] minimised per-architecture values (NaN in the loss column)
    loss_column: int = 0         # which column is the loss objective
    feasible: np.ndarray = field(repr=False, default=None)   # [n] bool: static constraints hold
    front_rows: np.ndarray = field(repr=False, default=None)  # true front: rows, epochs, points
    front_epochs: np.ndarray = field(repr=False, default=None)
    front_points: np.ndarray = field(repr=False, default=None)  # [m, k] minimised
    lower: np.ndarray = field(repr=False, default=None)
    upper: np.ndarray = field(repr=False, default=None)
    true_hv: float = 0.0

    @property
    def reference(self) -> np.ndarray:
        return np.full(len(self.objectives), REFERENCE)

    def normalise(self, points) -> np.ndarray:
        return (np.asarray(points, dtype=np.float64) - self.lower) / (self.upper - self.lower)

    def loss_feasible(self, losses) -> np.ndarray:
        """Do the loss constraints hold for `losses` (the loss objective's minimised values)?"""
        from benchmarks.core.objectives import natural

        ok = np.ones(np.shape(losses), dtype=bool)
        name = self.objectives[self.loss_column]
        for constraint in self.constraints:
            if constraint.objective == name:
                ok &= constraint.holds(natural(name, losses))
        return ok

    def record_fields(self) -> dict:
        """What a result file records so anyone can recompute its hypervolumes (`hv_space`)."""
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist(), "reference": self.reference.tolist(),
                "true_hv": self.true_hv, "true_front_size": int(len(self.front_rows))}


_SPACES: dict = {}


def forget_spaces() -> None:
    """Drop every cached ObjectiveSpace (true fronts, their rows and hypervolume: derived from test
    values). The harness calls it when a trial's scoring is done, so that no later algorithm running in
    this process can reach them (through `gc`, say)."""
    _SPACES.clear()


def constant_objectives(space: ObjectiveSpace) -> dict:
    """{objective: its one value (natural units)} for each objective other than the loss that has the same
    value on every architecture the constraints admit: a degenerate problem, whose true front is flat in
    that objective (the run still works; its HV regret then measures the other objectives alone)."""
    from benchmarks.core.objectives import natural

    constant = {}
    for col, name in enumerate(space.objectives):
        if col == space.loss_column:
            continue
        values = space.static[space.feasible, col]
        values = values[np.isfinite(values)]
        if len(values) and values.min() == values.max():
            constant[name] = float(natural(name, values[:1])[0])
    return constant


def objective_space(benchmark, objectives, constraints=()) -> ObjectiveSpace:
    """The ObjectiveSpace of a loaded `benchmark` (with test losses) for `objectives` (names, the
    benchmark's loss objective among them) and `constraints`; computed once per process and table."""
    from benchmarks.core.objectives import architecture_values, loss_objective, minimised

    objectives, constraints = tuple(objectives), tuple(constraints)
    key = (id(benchmark.search), benchmark.checksum, objectives, constraints)
    cached = _SPACES.get(key)
    if cached is not None:
        return cached
    if benchmark.test_loss is None:
        raise ValueError("objective_space needs a benchmark loaded with its test losses")
    search = benchmark.search
    loss_name = loss_objective(benchmark.name)
    if loss_name not in objectives:
        raise UserError(f"the objectives must include '{loss_name}', the loss objective of '{benchmark.name}'")
    loss_col = objectives.index(loss_name)
    static = np.full((search.n, len(objectives)), np.nan)
    feasible = np.ones(search.n, dtype=bool)
    for col, name in enumerate(objectives):
        if col != loss_col:
            static[:, col] = minimised(name, architecture_values(search, name))
    for constraint in constraints:
        if constraint.objective != loss_name:
            feasible &= constraint.holds(architecture_values(search, constraint.objective))
    # an architecture with an objective not recorded (nmt's memory 0 = unknown) is on no front and counts
    # as no find: its point is unknown, never 0 (a NaN constraint value already fails `holds`)
    feasible &= np.isfinite(np.delete(static, loss_col, axis=1)).all(axis=1)
    test = np.where(np.isfinite(benchmark.test_loss), benchmark.test_loss, np.inf)
    best_epoch = np.argmin(test, axis=1) + 1
    best_test = test[np.arange(search.n), best_epoch - 1]
    points = static.copy()
    points[:, loss_col] = best_test
    space = ObjectiveSpace(benchmark.name, objectives, constraints, static, loss_col, feasible)
    usable = feasible & np.isfinite(best_test) & np.isfinite(points).all(axis=1) & space.loss_feasible(best_test)
    rows = np.flatnonzero(usable)
    if len(rows) == 0:
        raise UserError(f"no architecture of '{benchmark.name}' satisfies "
                        f"{', '.join(map(str, constraints))}: loosen the constraint")
    on_front = rows[nondominated(points[rows])]
    front_points = points[on_front]
    lower, upper = front_points.min(axis=0), front_points.max(axis=0)
    upper = np.where(upper > lower, upper, lower + 1.0)
    object.__setattr__(space, "front_rows", on_front)
    object.__setattr__(space, "front_epochs", best_epoch[on_front])
    object.__setattr__(space, "front_points", front_points)
    object.__setattr__(space, "lower", lower)
    object.__setattr__(space, "upper", upper)
    object.__setattr__(space, "true_hv", hypervolume(space.normalise(front_points), space.reference))
    _SPACES[key] = space
    return space
