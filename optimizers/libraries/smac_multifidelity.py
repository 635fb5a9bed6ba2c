"""SMAC3's multi-fidelity facade (Hyperband intensifier with a random-forest model: BOHB-like) over
epochs (`smac-mf`).

SMAC proposes a configuration (x0..x{d-1} over the box of the graph2vec features, `features`) and a
budget; the configuration is snapped, once, to the nearest architecture no other configuration
holds (`fidelity_evaluation`), so a configuration that Hyperband promotes keeps its architecture and
continues from its checkpoint. SMAC's budgets are max * eta^-k (50, 16.7, 5.6, 1.85 epochs for
min 1, max 50, eta 3), rounded to whole epochs (50, 17, 6, 2). The cost told is the validation
log-perplexity at those epochs, `penalty` for a diverged run.

The facade's defaults otherwise (Hyperband with eta 3, random initial design of 10 configurations per
dimension, random forest on log costs, 20% random interleaving) except that the surrogate is retrained
every 32 configurations, not 8, as in `smac` (a quarter of the CPU time; 1000 h cost 540 s per trial
with 8), `deterministic=True`, `seed` = the
trial's seed, the forest predicting on one thread, and local-search start points in a fixed order
(as `smac`, so a trial depends only on its seed). With K workers SMAC is asked while earlier trials
are pending; its Hyperband starts further brackets when the running ones wait for results.
"""
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs
from optimizers.libraries.dehb_search import epochs_of
from optimizers.libraries.fidelity_evaluation import FidelityEvaluator, LibraryAdapter
from optimizers.model_based.smac_search import (_order_local_search_starts, fast_configuration_equality, labels,
                                    single_threaded_model)
from optimizers.libraries.snapped_evaluation import quiet_logger


class SMACMultiFidelity(LibraryAdapter):
    name = "smac-mf"
    needs = frozenset({"epochs", "graph2vec"})
    description = "SMAC3 multi-fidelity facade (Hyperband, BOHB-like) over epochs, 10-d graph2vec box"

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"
        min_epochs: int = 1              # SMAC's min_budget
        max_epochs: int = 50             # SMAC's max_budget
        eta: int = 3
        initial_per_dim: int = 10        # random initial configurations per dimension (facade default)
        retrain_after: int = 32          # configurations between surrogate retrains (facade default: 8; as `smac`)
        penalty: float = 10.0            # cost of a diverged run (log-perplexity units)
        n_trials: int = 1_000_000        # SMAC's trial limit; the simulated budget ends a trial first

    def start(self, inputs: SearchInputs) -> None:
        from ConfigSpace import ConfigurationSpace
        from smac import MultiFidelityFacade, Scenario

        s = self.settings
        if not (1 <= s.min_epochs < s.max_epochs and s.eta >= 2 and s.initial_per_dim >= 1
                and s.retrain_after >= 1):
            raise UserError("smac-mf needs 1 <= min_epochs < max_epochs, eta >= 2, initial_per_dim >= 1 and retrain_after >= 1")
        if inputs.features is None or inputs.features.shape[0] != inputs.search.n:
            raise UserError("smac-mf needs a feature matrix with one row per architecture (setting 'features')")
        evaluator = FidelityEvaluator(inputs.features, s.penalty)
        low, high = evaluator.box()
        self._names = labels(inputs.features.shape[1])
        space = ConfigurationSpace({n: (float(lo), float(hi)) for n, lo, hi in zip(self._names, low, high)},
                                   seed=int(inputs.seed))
        self._resources = ExitStack()
        folder = self._resources.enter_context(tempfile.TemporaryDirectory(prefix="nasbench-smac-mf-"))
        self._resources.enter_context(quiet_logger("smac"))
        scenario = Scenario(space, name="nasbench", output_directory=Path(folder) / "smac", deterministic=True,
                            n_trials=int(s.n_trials), seed=int(inputs.seed), min_budget=s.min_epochs,
                            max_budget=s.max_epochs)
        facade = MultiFidelityFacade
        self._smac = facade(scenario, _not_called, overwrite=True, logging_level=False,
                            model=single_threaded_model(scenario),
                            initial_design=facade.get_initial_design(
                                scenario, n_configs_per_hyperparameter=s.initial_per_dim),
                            intensifier=facade.get_intensifier(scenario, eta=s.eta),
                            config_selector=facade.get_config_selector(scenario, retrain_after=s.retrain_after))
        _order_local_search_starts(self._smac)
        self._resources.enter_context(fast_configuration_equality())
        self._begin(evaluator)

    def _propose(self):
        info = self._smac.ask()
        return info, np.array([info.config[n] for n in self._names], dtype=float), epochs_of(info.budget)

    def _answer(self, info, cost: float, cost_s: float) -> None:
        from smac.runhistory.dataclasses import TrialValue

        self._smac.tell(info, TrialValue(cost=float(cost)), save=False)

    def finish(self) -> None:
        resources = getattr(self, "_resources", None)
        if resources is not None:
            resources.close()
            self._resources = None


def _not_called(config, seed: int = 0, budget: float = 0.0) -> float:
    raise RuntimeError("SMAC is driven through ask/tell; its target function is never called")
