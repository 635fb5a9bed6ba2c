"""Multi-objective search (`nasbench run --objectives`): random search, MOASHA, MOREA, ParEGO and mo-lcbo.

Every searcher here ranks what it has seen by *non-dominated sorting*: Pareto rank first (moocore's
`pareto_rank`: 0 for the non-dominated points, 1 for those only they dominate, ...), then, within a
rank, an epsilon-net order (Salinas et al. 2021, as syne-tune's `NonDominatedPriority`): the point
with the lowest loss first, then each next point the one farthest (Euclidean, objectives scaled to
[0, 1] over the points ranked) from those already taken, so promotions and parents spread along the
front instead of crowding at one end. A point whose run diverged (non-finite loss) ranks last.

Objective values come from each observation (`Observation.objectives`, natural direction) and are
minimised here (GLUE points negated). Constraints on objectives known before training (params,
flops) are used up front: random search and the first architectures of ASHA and evolution are drawn
from the architectures that satisfy them.
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.multi_fidelity.asha import ASHA
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.model_based.bayesian import BayesianOptimisation, SpaceBO, fit_bags, predict_bags
from optimizers.evolution.regularized_evolution import RegularizedEvolution
from optimizers.training_free.lcbo import LearningCurveBO, parse_numbers


def objective_vector(observation, objectives) -> np.ndarray:
    """The observation's objectives in minimisation form [k] (inf everywhere if the loss is not finite)."""
    from benchmarks.core.objectives import minimised

    values = observation.objectives or {}
    vector = np.array([float(minimised(name, values.get(name, math.nan))) for name in objectives])
    if observation.status != "OK" or not np.isfinite(vector).all():
        return np.full(len(objectives), math.inf)
    return vector


def known_feasible(inputs: SearchInputs) -> np.ndarray:
    """[n] bool: the constraints on objectives known before training hold (all True without any)."""
    from benchmarks.core.objectives import known_before_training

    feasible = np.ones(inputs.search.n, dtype=bool)
    for constraint in inputs.constraints:
        if known_before_training(constraint.objective, inputs.search.name):
            if constraint.objective == "params":
                values = inputs.search.num_params.astype(np.float64)
            elif constraint.objective in inputs.objectives and inputs.known_objectives is not None:
                values = inputs.known_objectives[:, inputs.objectives.index(constraint.objective)]
            else:
                continue
            feasible &= constraint.holds(values)
    return feasible


def priority_order(points: np.ndarray, loss_column: int = 0, limit: int | None = None) -> np.ndarray:
    """Indices of `points` [m, k] (minimised) best first: non-dominated sorting with an epsilon-net
    within each rank, seeded by the lowest loss; non-finite points last, in their order. `limit`: only
    the first `limit` are needed (ranks past them are not ordered)."""
    import moocore

    points = np.asarray(points, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(points).all(axis=1))
    order: list = []
    if len(finite):
        values = points[finite]
        low, high = values.min(axis=0), values.max(axis=0)
        scaled = (values - low) / np.where(high > low, high - low, 1.0)
        ranks = np.asarray(moocore.pareto_rank(values))
        for rank in range(int(ranks.max()) + 1):
            if limit is not None and len(order) >= limit:
                return np.array(order[:limit], dtype=np.int64)
            members = np.flatnonzero(ranks == rank)
            order += [int(finite[members[k]]) for k in _epsilon_net(scaled[members], values[members, loss_column])]
    taken = set(order)
    return np.array(order + [k for k in range(len(points)) if k not in taken], dtype=np.int64)


def best_unpromoted(points: np.ndarray, promoted, loss_column: int, top: int) -> int | None:
    """The index of the first point of `points` [m, k] in `priority_order` that is not `promoted` (a bool
    per point) and has finite objectives, if its position in that order is below `top`; else None.
    Only the Pareto rank holding it is put in epsilon-net order."""
    import moocore

    if top <= 0:
        return None
    points = np.asarray(points, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(points).all(axis=1))
    if not len(finite):
        return None
    values = points[finite]
    ranks = np.asarray(moocore.pareto_rank(values))
    open_ = ~np.asarray(promoted, dtype=bool)[finite]
    position = 0
    for rank in np.unique(ranks).tolist():
        members = np.flatnonzero(ranks == rank)
        if position >= top:
            return None
        if not open_[members].any():
            position += len(members)
            continue
        low, high = values.min(axis=0), values.max(axis=0)
        scaled = (values[members] - low) / np.where(high > low, high - low, 1.0)
        for offset, k in enumerate(_epsilon_net(scaled, values[members, loss_column])):
            if open_[members[k]]:
                return int(finite[members[k]]) if position + offset < top else None
    return None


def _epsilon_net(scaled: np.ndarray, loss: np.ndarray) -> list:
    """Order of the points of one front: lowest loss first, then farthest from those taken."""
    first = int(np.lexsort((np.arange(len(loss)), loss))[0])
    if len(loss) <= 2:                            # nothing to spread: lowest loss first
        return [first] + [k for k in range(len(loss)) if k != first]
    order = [first]
    distance = np.linalg.norm(scaled - scaled[first], axis=1)
    distance[first] = -1.0
    for _ in range(len(scaled) - 1):
        nxt = int(np.argmax(distance))            # first index on ties: deterministic
        order.append(nxt)
        distance = np.minimum(distance, np.linalg.norm(scaled - scaled[nxt], axis=1))
        distance[order] = -1.0
    return order


class _MultiObjective:
    """Mixin: the objectives of the run, checked at start."""
    multi_objective = True

    def _begin_objectives(self, inputs: SearchInputs) -> None:
        from benchmarks.core.objectives import loss_objective

        if not inputs.objectives:
            raise UserError(f"'{self.name}' is a multi-objective algorithm: name two or three objectives with "
                            "--objectives (e.g. logppl,params)")
        self._objectives = tuple(inputs.objectives)
        self._loss_column = self._objectives.index(loss_objective(inputs.search.name))


class MORandomSearch(_MultiObjective, Algorithm):
    """Random search at a fixed epoch count over the architectures that satisfy the known constraints:
    the multi-objective baseline (every architecture it trains is a candidate for the front)."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    name = "mo-rs"
    description = "multi-objective random search, each architecture trained a fixed number of epochs"
    needs = frozenset({"epochs"})

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 50          # epochs each drawn architecture is trained to

    def start(self, inputs: SearchInputs) -> None:
        self._begin_objectives(inputs)
        rows = np.flatnonzero(known_feasible(inputs))
        self._order = iter(rows[inputs.rng.permutation(len(rows))].tolist())
        self._epochs = min(int(self.settings.epochs), inputs.search.max_epochs)

    def ask(self) -> Job | None:
        row = next(self._order, None)
        return None if row is None else Job(row, self._epochs)


class SingleFidelityMORandomSearch(MORandomSearch):
    """`mo-rs` on a single-fidelity benchmark (bert): each draw is one whole evaluation."""
    needs = frozenset()

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 1           # one evaluation per architecture


class MOASHA(_MultiObjective, ASHA):
    """ASHA whose promotions rank each rung's results by non-dominated sorting (MOASHA, Schmucker et al.
    2021; syne-tune's `MOASHA` with `NonDominatedPriority`): a result is promoted when its position in
    that order is within the top floor(n_k / eta) of its rung."""
    name = "mo-asha"
    description = "multi-objective ASHA: promotions by non-dominated sorting (MOASHA), R = 50, eta = 3, grace 1"

    def start(self, inputs: SearchInputs) -> None:
        self._begin_objectives(inputs)
        super().start(inputs)
        rows = np.flatnonzero(known_feasible(inputs))
        self._order = iter(rows[inputs.rng.permutation(len(rows))].tolist()) if len(rows) < inputs.search.n \
            else self._order
        self._results = {}        # (bracket, rung) -> ([vectors], [rows], set of promoted rows)
        self._top = {}            # (bracket, rung) -> rows in the top n // eta, not promoted (cached)

    def ask(self) -> Job | None:
        for b, rungs in enumerate(self._brackets):
            for k in range(len(rungs) - 2, -1, -1):
                row = self._promotable(b, k)
                if row is not None:
                    self._results[b, k][2].add(row)
                    self._top.pop((b, k), None)
                    self._place[row] = (b, k + 1)
                    self.decisions.append((row, b, k + 1, True))
                    return Job(row, rungs[k + 1].epochs)
        return self._start_new()

    def _promotable(self, b: int, k: int):
        entry = self._results.get((b, k))
        if entry is None:
            return None
        if (b, k) not in self._top:
            vectors, rows, promoted = entry
            index = best_unpromoted(np.array(vectors), [row in promoted for row in rows], self._loss_column,
                                    len(rows) // self._eta)
            self._top[b, k] = None if index is None else rows[index]
        return self._top[b, k]

    def tell(self, job: Job, observation) -> None:
        b, k = self._place[job.arch]
        rung = self._brackets[b][k]
        vector = objective_vector(observation, self._objectives) if observation.epochs == rung.epochs \
            else np.full(len(self._objectives), math.inf)
        vectors, rows, _ = self._results.setdefault((b, k), ([], [], set()))
        vectors.append(vector)
        rows.append(job.arch)
        self._top.pop((b, k), None)


class MORegularizedEvolution(_MultiObjective, RegularizedEvolution):
    """Regularized evolution whose tournament winner is the sample's first member by non-dominated
    sorting (MOREA, as syne-tune's `MultiObjectiveRegularizedEvolution`); mutation and snapping as `re`
    (graph2vec noise on cells, the space's own mutation elsewhere)."""
    name = "mo-re"
    description = "multi-objective regularized evolution: non-dominated tournament selection (MOREA)"

    def start(self, inputs: SearchInputs) -> None:
        self._begin_objectives(inputs)
        super().start(inputs)
        feasible = np.flatnonzero(known_feasible(inputs))
        if len(feasible) < inputs.search.n and len(feasible) >= self.settings.population:
            self._initial = feasible[inputs.rng.permutation(len(feasible))[:self.settings.population]].tolist()
        self.vectors: dict = {}

    def tell(self, job: Job, observation) -> None:
        vector = objective_vector(observation, self._objectives) if observation.epochs == self._epochs \
            else np.full(len(self._objectives), math.inf)
        self.vectors[job.arch] = vector
        self.fitness[job.arch] = float(vector[self._loss_column])
        self._told += 1
        self._join(job.arch)

    def _tournament(self, members: list, fitness: dict, rng: np.random.Generator) -> int:
        size = min(self.settings.sample, len(members))
        picks = [members[k] for k in rng.permutation(len(members))[:size].tolist()]
        order = priority_order(np.array([self.vectors[row] for row in picks]), self._loss_column)
        return picks[int(order[0])]


class SpaceMORegularizedEvolution(MORegularizedEvolution):
    """`mo-re` in a benchmark's native space (bert): native mutation, snapped (P 10, S 5, as `re` there)."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    needs = frozenset({"mutate", "encoding", "distance"})

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"
        population: int = 10
        sample: int = 5
        noise_stds: tuple[float, ...] = (1.0,)
        epochs: int = 1
        new_children_only: bool = True


def chebyshev(vectors: np.ndarray, weights: np.ndarray, rho: float = 0.05) -> np.ndarray:
    """ParEGO's augmented Chebyshev scalarisation of minimised `vectors` [m, k], each objective first
    scaled to [0, 1] over the m points: max_i(w_i f_i) + rho * sum_i(w_i f_i) (Knowles 2006)."""
    low, high = vectors.min(axis=0), vectors.max(axis=0)
    scaled = (vectors - low) / np.where(high > low, high - low, 1.0)
    weighted = scaled * weights
    return weighted.max(axis=1) + rho * weighted.sum(axis=1)


class ParEGO(_MultiObjective, BayesianOptimisation):
    """ParEGO (Knowles 2006) on the bagged-XGBoost BO of `bo`: at every refit a weight vector is drawn
    uniformly from the simplex, the observed objective vectors are scalarised with the augmented
    Chebyshev function (rho 0.05, objectives scaled to [0, 1] over the observations), and the
    surrogate's lower confidence bound of that scalar ranks the untried architectures."""
    name = "parego"
    description = "ParEGO: bagged-XGBoost BO on a random Chebyshev scalarisation drawn at each refit"

    def start(self, inputs: SearchInputs) -> None:
        self._begin_objectives(inputs)
        super().start(inputs)
        self._vectors: list = []
        self.weights: list = []          # kept for inspection (tests): the weights of each refit

    def tell(self, job: Job, observation) -> None:
        self.evaluated.append(job.arch)
        vector = objective_vector(observation, self._objectives)
        if observation.epochs == self._epochs and np.isfinite(vector).all():
            self._rows.append(job.arch)
            self._targets.append(float(vector[self._loss_column]))
            self._vectors.append(vector)

    def _rank(self, features, rows, targets, candidates, tie_rank, rng) -> np.ndarray:
        if len(rows) < 2:
            return candidates[np.argsort(tie_rank[candidates], kind="stable")]
        weights = rng.dirichlet(np.ones(len(self._objectives)))
        self.weights.append(weights)
        scalar = chebyshev(np.array(self._vectors), weights)
        boosters = fit_bags(features[rows], scalar, self.settings, rng)
        mean, std = predict_bags(boosters, features[candidates])
        return candidates[np.lexsort((tie_rank[candidates], mean - self.settings.beta * std))]


class SpaceParEGO(ParEGO):
    """`parego` over the space's own encoding (bert), sized as `bo` there (10 random, refit every evaluation)."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    needs = frozenset({"encoding"})
    Settings = SpaceBO.Settings


class MOLearningCurveBO(_MultiObjective, LearningCurveBO):
    """`lcbo` for several objectives: its rungs and quotas (1/2/9/50 epochs, top 1/5, 1/20, 1/3, looser for
    each rung's first promotions: up to 40, 24 and 3 of them, where lcbo has 40, 8, 3), its learned curve
    model, and its training-free filter (16 scored candidates per new cell), with promotions by
    non-dominated sorting.

    A result at rung k stands for the vector of the run's objectives with the loss replaced by lcbo's
    rank key (the model's optimistic prediction of the next rung's validation loss, or the linear
    extrapolation before the model has data); a rung's top `keep` share is taken in `priority_order`
    (Pareto rank, then epsilon-net). New cells: as lcbo, the best-scored of `oversample` random
    candidates (each score charged as in lcbo); cells that break a constraint on a known objective are
    not started while others are left. (The pool is put in `priority_order` of (minus the score, the
    objectives known before training), whose first point is always the best-scored: the known
    objectives only order the rest.)

    Anchor cells (`anchor_every`, default 4; 0: off): every `anchor_every`-th new cell is the
    best-scored of a pool of `anchor_pool` (2) drawn from the cells at or below the `anchor_share`
    quantile of an objective known before training (the smallest cells, where a front's cheap end lies),
    and trains straight to rung `anchor_rung` (9 epochs); the pool's other candidates stay for later
    pools, whose score is not charged twice. The pool is small because among the smallest cells the
    score finds a front's cells poorly. The curve model predicts from inputs clipped to the range it was fit on
    (`clip_inputs`): anchors fill a rung's fit with cells of one narrow score band, and a cell scored
    outside it was otherwise extrapolated far off (docs/results/hardware-aware.md#anchor-cells)."""
    name = "mo-lcbo"
    description = ("multi-objective lcbo: rungs 1/2/9/50, promotions by non-dominated sorting of the curve model's "
                   "prediction and the other objectives, new cells the best by hidden covariance of 16, every "
                   "4th of them the better-scored of 2 from the smallest 3%, trained straight to 9 epochs")

    @dataclass(frozen=True)
    class Settings(LearningCurveBO.Settings):
        early_cap: str = "40,24,3"           # lcbo's 40,8,3 with more early 2 -> 9 epoch promotions: a front
        #                                      needs several deep cells sooner than a single incumbent does
        anchor_every: int = 4                # every this many new cells (0: never) come from an anchor stratum:
        anchor_share: float = 0.03           # the cells at or below this quantile of an objective known before
        #                                      training (params, flops), in turn, where a front's end lies
        anchor_rung: int = 2                 # the rung (index) an anchor cell trains to first (2: 9 epochs)
        anchor_pool: int = 2                 # candidates scored per anchor cell (0: oversample, as other new cells):
        #                                      among the smallest cells the score finds a front's cells poorly
        clip_inputs: bool = True             # the curve model predicts from inputs clipped to the range it was
        #                                      fit on: anchors fill a rung's fit with cells of one score band
        promote_top: int = 0                 # lcbo's rule for a rung's single best result: a front has no single best

        def __post_init__(self):
            super().__post_init__()
            rungs = len(parse_numbers(self.rungs, int, "rungs"))
            if self.anchor_every < 0 or not 0 < self.anchor_share <= 1 or not 0 <= self.anchor_rung < rungs - 1 \
                    or self.anchor_pool < 0:
                raise UserError(f"mo-lcbo needs anchor_every >= 0, anchor_share in (0, 1], anchor_pool >= 0 and an "
                                f"anchor_rung among the rungs but the last (0..{rungs - 2})")
            if self.filter_share:
                raise UserError("mo-lcbo has no filter_share: its new cells are the best of a scored pool (oversample)")
            if self.promote_top:
                raise UserError("mo-lcbo has no promote_top: it promotes by non-dominated rank, with no single best result")

    def start(self, inputs: SearchInputs) -> None:
        self._begin_objectives(inputs)
        super().start(inputs)
        n = inputs.search.n
        self._known = np.full((n, len(self._objectives)), np.nan)
        if inputs.known_objectives is not None:
            from benchmarks.core.objectives import minimised

            for col, name in enumerate(self._objectives):
                self._known[:, col] = minimised(name, np.asarray(inputs.known_objectives[:, col], dtype=float))
        self._feasible = known_feasible(inputs)
        self._seen = {}                        # row -> its last objective vector (minimised)
        if self._candidates is not None:
            self._candidates.rank_pool = self._rank_pool
        self._anchors = []                     # (name, [n] bool mask) per known objective
        self._new_cells = 0
        self._anchor_rows = set()
        if self.settings.anchor_every:
            for col, name in enumerate(self._objectives):
                values = self._known[:, col]
                if col != self._loss_column and np.isfinite(values).any():
                    cut = np.quantile(values[np.isfinite(values)], self.settings.anchor_share)
                    self._anchors.append((name, np.isfinite(values) & (values <= cut) & self._feasible))

    def _new_architecture(self):
        """lcbo's new cell (the best of a scored pool), but every `anchor_every`-th pool is drawn from an
        anchor stratum (the known objectives in turn) while it has cells left."""
        self._new_cells += 1
        every = self.settings.anchor_every
        if self._anchors and self._candidates is not None and self._new_cells % every == 0:
            stratum = self._anchors[(self._new_cells // every) % len(self._anchors)]
            rows, overhead_s = self._candidates.take_best(1, self.settings.anchor_pool or self.settings.oversample,
                                                          stratum)
            if rows:
                self._anchor_rows.add(rows[0])
                return rows[0], overhead_s
        return super()._new_architecture()

    def _first_rung(self, row: int) -> int:
        return self.settings.anchor_rung if row in self._anchor_rows else 0

    def _clip_inputs(self) -> bool:
        return self.settings.clip_inputs

    def _rank_pool(self, pool: list, key: np.ndarray) -> list:
        """Positions of `pool` best first: feasible before infeasible, then by priority_order of (the
        filter's key, the known objectives)."""
        known = [c for c in range(len(self._objectives)) if c != self._loss_column
                 and np.isfinite(self._known[pool, c]).all()]
        points = np.column_stack([key[pool]] + [self._known[pool, c] for c in known])
        points[~np.isfinite(points)] = np.inf
        order = priority_order(points, 0).tolist()
        return [p for p in order if self._feasible[pool[p]]] + [p for p in order if not self._feasible[pool[p]]]

    def tell(self, job: Job, observation) -> None:
        self._seen[job.arch] = objective_vector(observation, self._objectives)
        super().tell(job, observation)

    def _vectors(self, k: int) -> np.ndarray:
        """[m, objectives] of rung k's results: their objectives with the loss column set to the rank key."""
        keys = self._score[k]
        vectors = np.array([self._seen[row] for row in self._members[k]], dtype=float).reshape(len(keys), -1)
        vectors[:, self._loss_column] = keys
        vectors[~np.isfinite(keys)] = np.inf
        return vectors

    def _promotable(self, k: int):
        quota = self._quota(k, len(self._score[k]))
        if quota <= self._promoted_count[k]:
            return None
        return best_unpromoted(self._vectors(k), self._promoted[k], self._loss_column, quota)

    def _promote_past_quota(self) -> Job | None:
        for k in range(len(self._levels) - 2, -1, -1):
            position = best_unpromoted(self._vectors(k), self._promoted[k], self._loss_column, len(self._score[k]))
            if position is not None:
                return self._promote(k, position)
        return None
