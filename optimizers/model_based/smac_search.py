"""SMAC3 (hyperparameter-optimisation facade) over the bounding box of the graph2vec features (`smac`).

Each feature dimension is a float hyperparameter between its minimum and maximum over all
architectures. SMAC is driven through its ask/tell interface: `ask()` gives a configuration, its
vector is snapped to the nearest architecture by cosine distance (over all architectures, as in the
release) and trained `epochs` epochs; `tell()` reports its validation log-perplexity at `epochs`, or
`penalty` if the run diverged. A configuration that snaps to an architecture trained before is told
that architecture's known cost and trains nothing (a cached model costs no time).

SMAC 2's HPO facade defaults otherwise (random forest of 10 trees on log costs, log EI, Sobol
initial design of 10 configurations per dimension, 20% random interleaving, surrogate retrained
every 8 configurations), `deterministic=True`, `seed` = the trial's seed, a scenario with
`n_trials` far beyond any budget (the environment's `BudgetExhausted` ends the trial). The release
used SMAC 0.12's SMAC4AC with a 30-configuration Latin hypercube and a penalty of 1000 (its TPE used
10; the NAS-Bench-NLP issue asks for the same penalty for both). SMAC writes its run history into
a temporary folder that is removed at the end; its logging is silenced.

With K workers SMAC is asked repeatedly while earlier configurations are pending, as SMAC 2's
ask/tell allows; a configuration that snaps onto an architecture still training (only possible with
`new_only=False`) is told that architecture's cost when its job ends. With one worker every
configuration is told before the next ask, exactly the sequential loop.

Reproducibility: SMAC's own random draws come from `seed`. Whether anything depends on Python's
string hashing is checked by tests/test_smac.py (same seed under different PYTHONHASHSEED values).
"""
import functools
import math
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.libraries.snapped_evaluation import SnappedEvaluator, SpaceUsedUp, quiet_logger
from optimizers.libraries.space_search import NativeSpaceSearch


class SMAC(Algorithm):
    name = "smac"
    needs = frozenset({"graph2vec"})
    description = "SMAC3 (HPO facade) over the box of 10-d graph2vec features, snapped to architectures"

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # the paper's 10-d graph2vec features (the shipped file)
        epochs: int = 50                # epochs each architecture is trained to
        penalty: float = 10.0           # cost of a diverged architecture (log-perplexity units)
        initial_per_dim: int = 10       # Sobol initial configurations per dimension (facade default)
        retrain_after: int = 32         # configurations between surrogate retrains (facade default: 8)
        n_trials: int = 1_000_000       # SMAC's trial limit; the simulated budget ends a trial first
        max_repeats: int = 2000         # configurations in a row that train nothing new: stop
        new_only: bool = True           # snap to the nearest untrained architecture (False: any, as the release)

    def start(self, inputs: SearchInputs) -> None:
        from ConfigSpace import ConfigurationSpace
        from smac import HyperparameterOptimizationFacade, Scenario

        settings = self.settings
        _check(settings)
        self._evaluate = SnappedEvaluator.for_algorithm(self, inputs)   # records vectors, proposals, losses
        low, high = self._evaluate.box()
        self._names = labels(inputs.features.shape[1])
        space = ConfigurationSpace({name: (float(lo), float(hi)) for name, lo, hi in zip(self._names, low, high)},
                                   seed=int(inputs.seed))
        self._resources = ExitStack()
        folder = self._resources.enter_context(tempfile.TemporaryDirectory(prefix="nasbench-smac-"))
        self._resources.enter_context(quiet_logger("smac"))
        scenario = Scenario(space, name="nasbench", output_directory=Path(folder) / "smac",
                            deterministic=True, n_trials=int(settings.n_trials), seed=int(inputs.seed))
        facade = HyperparameterOptimizationFacade
        self._smac = facade(
            scenario, _not_called, overwrite=True, logging_level=False,
            model=single_threaded_model(scenario),
            initial_design=facade.get_initial_design(
                scenario, n_configs_per_hyperparameter=settings.initial_per_dim),
            config_selector=facade.get_config_selector(scenario, retrain_after=settings.retrain_after))
        _order_local_search_starts(self._smac)
        self._resources.enter_context(fast_configuration_equality())
        self._infos: list = []                  # per proposal: SMAC's TrialInfo
        self._done = False

    def ask(self) -> Job | None:
        """Ask SMAC until a configuration snaps to a new architecture; known costs are told at once."""
        if self._done:
            return None
        while True:
            info = self._smac.ask()
            self._infos.append(info)
            try:
                result = self._evaluate.propose(np.array([info.config[name] for name in self._names], dtype=float))
            except SpaceUsedUp:
                self._done = True
                return None
            if isinstance(result, Job):
                return result
            if result is not None:
                self._tell(len(self._infos) - 1, result)

    def tell(self, job: Job, observation) -> None:
        for index, cost in self._evaluate.observe(job, observation):
            self._tell(index, cost)

    def _tell(self, index: int, cost: float) -> None:
        from smac.runhistory.dataclasses import TrialValue

        self._smac.tell(self._infos[index], TrialValue(cost=cost), save=False)

    def finish(self) -> None:
        resources = getattr(self, "_resources", None)
        if resources is not None:
            resources.close()


@contextmanager
def fast_configuration_equality():
    """ConfigSpace's `Configuration.__eq__` with each configuration's values cached.

    SMAC's config selector checks every candidate against the list of processed configurations
    (`config not in processed`), and `Configuration.__eq__` rebuilds both value dicts each time: a
    third of a 1000-hour trial's CPU time. The replacement gives the same answer (the same value
    dicts, compared the same way), caching a configuration's dict against its vector's bytes, so a
    configuration changed in place is recomputed. Restored on exit.
    """
    from ConfigSpace import Configuration

    original = Configuration.__eq__

    def values_of(config) -> dict:
        key = config._vector.tobytes()
        cached = config.__dict__.get("_nasbench_values")
        if cached is None or cached[0] != key:
            cached = (key, dict(config))
            config.__dict__["_nasbench_values"] = cached
        return cached[1]

    def equal(self, other):
        if isinstance(other, self.__class__):
            return values_of(self) == values_of(other) and (
                self.config_space is other.config_space or self.config_space == other.config_space)
        return NotImplemented

    Configuration.__eq__ = equal
    try:
        yield
    finally:
        Configuration.__eq__ = original


def single_threaded_model(scenario):
    """The HPO facade's random forest (its `get_model` settings) predicting on one thread, not all cores,
    its trees grown without room reserved for a million leaves each (`compact_forest_class`)."""
    return compact_forest_class()(configspace=scenario.configspace, log_y=True, n_trees=10, ratio_features=1.0,
                                  min_samples_split=2, min_samples_leaf=1, max_depth=2**20, bootstrapping=True,
                                  instance_features=scenario.instance_features, seed=scenario.seed, n_jobs=1)


@functools.cache
def compact_forest_class():
    """SMAC's RandomForest, with the leaf cap of each fit set to its number of points + 1, predicting tree by
    tree in a plain loop.

    SMAC 2.4 hands scikit-learn max_leaf_nodes=2**20, and scikit-learn's best-first tree builder then
    reserves (and zeroes part of) room for 2**21 nodes in every tree: 1.7 CPU s for a 10-tree fit on 50
    points, against 0.03 s, mostly page faults, and SMAC refits after every few evaluations. A tree on n
    points has at most n leaves, so a cap of n + 1 is never reached: the same builder takes the same
    random draws in the same order and grows the same trees (tests/test_smac.py compares them), so every
    trajectory stays as it was.

    Each prediction of SMAC's forest goes through joblib's `Parallel` even on one thread, which costs more
    than the ten trees' own predictions (about 8% of a `smac` trial on gpt-m); the fitted forest predicts
    with `sequential_forest_class`'s loop instead: each tree's same `predict` on the same input, in the same
    order, into the same array.
    """
    from smac.model.random_forest import RandomForest

    class CompactRandomForest(RandomForest):
        def _train(self, X, y):
            if self._rf_opts.get("max_leaf_nodes") is not None:
                self._rf_opts["max_leaf_nodes"] = max(2, len(X) + 1)
            trained = super()._train(X, y)
            if getattr(self._rf, "n_jobs", None) == 1:
                self._rf.__class__ = sequential_forest_class(type(self._rf))
            return trained

    return CompactRandomForest


@functools.cache
def sequential_forest_class(forest_class):
    """`forest_class` (SMAC's EPMRandomForest) whose `all_trees_pred` calls its trees one after another,
    as joblib's one-thread `Parallel` in SMAC's own does, without joblib's set-up per call."""

    class SequentialForest(forest_class):
        def all_trees_pred(self, X):
            X = self._validate_X_predict(X)
            if X.ndim == 1:
                X = X[None, :]
            shape = (X.shape[0], self.n_estimators) + ((self.n_outputs_,) if self.n_outputs_ > 1 else ())
            preds = np.zeros(shape, dtype=np.float64)
            for tree_idx, estimator in enumerate(self.estimators_):
                preds[:, tree_idx] = estimator.predict(X, check_input=False)
            return preds

    SequentialForest.__name__ = SequentialForest.__qualname__ = f"Sequential{forest_class.__name__}"
    return SequentialForest


def _order_local_search_starts(smac) -> None:
    """Make SMAC's local search start from its points in a fixed order.

    SMAC 2 collects the start points as `list(set(configurations))`, and a Configuration hashes its
    repr string, so their order (and the random draws of the search) would follow PYTHONHASHSEED.
    Sorting them by their vectors keeps the same points and makes a trial depend only on its seed.
    """
    local_search = getattr(getattr(smac, "_acquisition_maximizer", None), "_local_search", None)
    original = getattr(local_search, "_get_initial_points", None)
    if original is None:      # another SMAC layout: reproducible only with PYTHONHASHSEED fixed
        return

    def ordered(*args, **kwargs):
        return sorted(original(*args, **kwargs), key=lambda config: tuple(config.get_array()))

    local_search._get_initial_points = ordered


def labels(d: int) -> list[str]:
    """Hyperparameter names, zero-padded so that their sorted order is numeric order."""
    width = len(str(d - 1))
    return [f"x{i:0{width}d}" for i in range(d)]


def _not_called(config, seed: int = 0) -> float:
    raise RuntimeError("SMAC is driven through ask/tell; its target function is never called")


def _check(settings) -> None:
    if settings.initial_per_dim < 0 or settings.retrain_after < 1 or settings.max_repeats < 1 \
            or settings.n_trials < 1:
        raise UserError("smac needs initial_per_dim >= 0 and retrain_after, max_repeats, n_trials >= 1")


class SpaceSMAC(NativeSpaceSearch):
    """`smac` in a benchmark's native space: SMAC3's HPO facade over its ConfigSpace, each proposal
    snapped; SMAC minimises 100 + the validation loss (bert: 100 - GLUE, positive as its log-cost forest
    needs; a benchmark whose loss can reach -100 would need another offset)."""
    name = "smac"
    description = "SMAC3 HPO facade over the native ConfigSpace, proposals snapped by the space's distance"

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"       # the space's own encoding (snapping)
        initial: int = 10               # random initial configurations (of ~50 evaluations)
        retrain_after: int = 1          # surrogate retrained after every configuration
        n_trials: int = 1_000_000       # SMAC's trial limit; the simulated budget ends a trial first

    def _begin(self, inputs: SearchInputs) -> None:
        from smac import HyperparameterOptimizationFacade, Scenario
        from smac.initial_design import RandomInitialDesign

        if self.settings.initial < 1 or self.settings.retrain_after < 1 or self.settings.n_trials < 1:
            raise UserError(f"{self.name} needs initial, retrain_after and n_trials >= 1")
        self._resources = ExitStack()
        folder = self._resources.enter_context(tempfile.TemporaryDirectory(prefix="nasbench-smac-"))
        self._resources.enter_context(quiet_logger("smac"))
        scenario = Scenario(self._space.configuration_space(int(inputs.seed)), name="nasbench-space",
                            output_directory=Path(folder) / "smac", deterministic=True,
                            n_trials=int(self.settings.n_trials), seed=int(inputs.seed))
        facade = HyperparameterOptimizationFacade
        self._smac = facade(scenario, _smac_target, overwrite=True, logging_level=False,
                            model=single_threaded_model(scenario),
                            initial_design=RandomInitialDesign(scenario, n_configs=self.settings.initial),
                            config_selector=facade.get_config_selector(
                                scenario, retrain_after=self.settings.retrain_after))
        _order_local_search_starts(self._smac)

    def _propose(self):
        info = self._smac.ask()
        return info, self._space.from_configuration(info.config)

    def _report(self, info, loss: float) -> None:
        from smac.runhistory.dataclasses import TrialValue

        cost = 100.0 + loss if math.isfinite(loss) else 100.0      # 100 - GLUE
        self._smac.tell(info, TrialValue(cost=cost), save=False)

    def finish(self) -> None:
        resources = getattr(self, "_resources", None)
        if resources is not None:
            resources.close()


def _smac_target(config, seed: int = 0) -> float:
    raise RuntimeError("SMAC is driven through ask/tell; its target function is never called")
