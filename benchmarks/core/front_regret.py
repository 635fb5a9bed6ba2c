"""A trial's front, job by job, and its hypervolume regret (or constrained regret), on the harness side.

The front is chosen by what the searcher saw and scored by test values, exactly as the
single-objective incumbent is: after each job, every architecture the trial trained is represented by
its lowest validation loss among the epochs trained so far (first such epoch) and its
per-architecture objectives; the trial's front is the non-dominated set of those points that satisfy
the constraints (judged on validation), equal points resolved to the lowest row. Its members are then
scored with their test loss at that epoch (members infeasible on test do not count), and

    HV regret = HV(true front) - HV(scored trial front)      (normalised space, `benchmarks.core.pareto`)

With one objective and constraints, the "front" is the best-by-validation feasible (architecture,
epoch), ties broken by (loss, row, epoch) as the environment's incumbent, and the regret is its test
loss minus the best feasible test loss of the table.

Incremental: a job changes one architecture's point (its loss can only fall), so the front changes
by that point entering and the points it dominates leaving; the hypervolume is recomputed only when
the front changed.
"""
import math

import numpy as np

from benchmarks.core.pareto import ObjectiveSpace, hypervolume


class TrialFront:
    """The searcher-side front of one trial, updated one job at a time."""

    def __init__(self, space: ObjectiveSpace, search):
        from benchmarks.core.environment import _prefix_index

        self.space = space
        index = _prefix_index(search)
        self._best_val, self._best_epoch = index.prefix_best_val, index.prefix_best_epoch
        self._static = space.static
        self._col = space.loss_column
        self.rows: list = []                                   # front members (row indices)
        self.epochs: list = []                                 # their epochs (1-based)
        self.vectors = np.empty((0, len(space.objectives)))    # their searcher-side points
        self._point_of: dict = {}                              # row -> (val loss, epoch) now

    def update(self, row: int, reached: int) -> bool:
        """Row `row` is now trained to `reached` epochs; True if the front changed."""
        loss = self._best_val.item(row, reached)
        if not math.isfinite(loss):
            return False
        epoch = self._best_epoch.item(row, reached)
        if self._point_of.get(row) == (loss, epoch):
            return False
        self._point_of[row] = (loss, epoch)
        was_member = row in self.rows
        if was_member:
            self._remove([self.rows.index(row)])
        if not (self.space.feasible[row] and self.space.loss_feasible(loss)):
            if was_member:         # a loss constraint with a lower bound: rebuild (rare)
                self._rebuild()
            return was_member
        vector = self._static[row].copy()
        vector[self._col] = loss
        if len(self.rows):
            members = self.vectors
            weakly = (members <= vector).all(axis=1)
            equal = (members == vector).all(axis=1)
            member_rows = np.array(self.rows)
            if (weakly & (~equal | (member_rows < row))).any():
                return was_member
            beaten = (vector <= members).all(axis=1) & (~equal | (row < member_rows))
            if beaten.any():
                self._remove(np.flatnonzero(beaten).tolist())
        self.rows.append(row)
        self.epochs.append(epoch)
        self.vectors = np.vstack([self.vectors, vector[None, :]])
        return True

    def _remove(self, positions) -> None:
        keep = [k for k in range(len(self.rows)) if k not in set(positions)]
        self.rows = [self.rows[k] for k in keep]
        self.epochs = [self.epochs[k] for k in keep]
        self.vectors = self.vectors[keep]

    def _rebuild(self) -> None:
        points, self._point_of = dict(self._point_of), {}
        self.rows, self.epochs, self.vectors = [], [], np.empty((0, len(self.space.objectives)))
        for row, (loss, epoch) in sorted(points.items()):
            self._point_of[row] = None
            reached = epoch          # the prefix minimum up to its epoch is the same point
            self.update(row, reached)
            self._point_of[row] = (loss, epoch)

    def incumbent(self) -> tuple[int, int] | None:
        """The member with the lowest validation loss (then lowest row): (row, epoch), or None."""
        if not self.rows:
            return None
        k = min(range(len(self.rows)), key=lambda i: (self.vectors[i, self._col], self.rows[i]))
        return self.rows[k], self.epochs[k]


def front_trajectory(benchmark, space: ObjectiveSpace, arch_rows, reached_epochs, measure=None) -> dict:
    """Regret per job (HV regret with two or more objectives; constrained regret with one), the
    incumbent (row, epoch) per job and the final front, for a trial that trained `arch_rows[j]` to
    `reached_epochs[j]` epochs at job j. `benchmark` must hold its test losses. `measure(points)`, if
    given, replaces the HV regret: it maps the front's test-scored points (minimised objectives, one row
    each, feasible on test) to a number (other indicators: `nasbench_cli.results.indicators`)."""
    test = benchmark.test_loss
    front = TrialFront(space, benchmark.search)
    single = len(space.objectives) == 1
    l_star = float(space.front_points[:, space.loss_column].min())
    regrets, incumbents, regret = [], [], None
    for row, reached in zip(arch_rows, reached_epochs):
        changed = front.update(int(row), int(reached))
        if changed:
            regret = _regret(front, space, test, single, l_star) if measure is None \
                else (measure(scored_points(front, space, test)) if front.rows else None)
        regrets.append(regret)
        incumbents.append(front.incumbent())
    final = sorted(zip(front.rows, front.epochs), key=lambda p: (float(test[p[0], p[1] - 1]), p[0]))
    return {"regret": regrets, "incumbent": incumbents, "front": final, "l_star": l_star}


def scored_points(front: TrialFront, space: ObjectiveSpace, test) -> np.ndarray:
    """The front's members with their test loss in place of the validation loss, those feasible on test."""
    col = space.loss_column
    scored = front.vectors.copy()
    scored[:, col] = test[np.array(front.rows, dtype=np.int64), np.array(front.epochs, dtype=np.int64) - 1]
    return scored[space.loss_feasible(scored[:, col]) & np.isfinite(scored[:, col])]


def _regret(front: TrialFront, space: ObjectiveSpace, test, single: bool, l_star: float):
    if not front.rows:
        return None
    col = space.loss_column
    scored = scored_points(front, space, test)
    if single:
        return float(scored[:, col].min()) - l_star if len(scored) else None
    regret = space.true_hv - hypervolume(space.normalise(scored), space.reference)
    return 0.0 if regret < 0 and regret > -1e-12 else float(regret)
