"""DEHB (Awad et al., 2021; the `dehb` package) over epochs as the fidelity (`dehb`).

DEHB proposes a vector in the unit cube [0, 1]^d and a fidelity; the vector is scaled to the box of
the graph2vec features (`features`) and snapped, once per configuration, to the nearest architecture
no other configuration holds (`fidelity_evaluation`); a promoted configuration keeps its architecture
and continues from its checkpoint. DEHB's fidelities are max * eta^-k (50, 16.7, 5.6, 1.85 epochs
for min 1, max 50, eta 3), rounded to whole epochs (50, 17, 6, 2). Its fitness is the validation
log-perplexity at those epochs (`penalty` for a diverged run) and its cost the simulated seconds the
job was charged.

Driven through DEHB's ask/tell interface with its defaults (mutation 0.5, crossover 0.5, rand1_bin,
`async_strategy="immediate"`), `seed` = the trial's seed and `n_workers=1`: DEHB's own Dask client
is never started; the simulator runs K workers, and DEHB's ask hands out jobs of a new bracket when
the running ones wait, which is how DEHB itself fills parallel workers. DEHB writes its log and state
under a temporary folder removed at the end, and its (loguru) console output is switched off.
"""
import tempfile
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs
from optimizers.libraries.fidelity_evaluation import FidelityEvaluator, LibraryAdapter


class DEHBSearch(LibraryAdapter):
    name = "dehb"
    needs = frozenset({"epochs", "graph2vec"})
    requires = {"dehb": "pip install 'nasbench[libs]' && pip install --no-deps dehb==0.1.2 "
                         "(DEHB pins NumPy < 2 in its metadata but runs on NumPy 2)"}
    description = "DEHB (differential evolution + Hyperband) over epochs, 10-d graph2vec box"

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # the box DEHB's unit cube is scaled to
        min_epochs: int = 1             # DEHB's min_fidelity
        max_epochs: int = 50            # DEHB's max_fidelity
        eta: int = 3
        mutation_factor: float = 0.5
        crossover_prob: float = 0.5
        penalty: float = 10.0           # fitness of a diverged run (log-perplexity units)

    def start(self, inputs: SearchInputs) -> None:
        from dehb import DEHB
        from loguru import logger

        s = self.settings
        if not (1 <= s.min_epochs < s.max_epochs and s.eta >= 2):
            raise UserError(f"dehb needs 1 <= min_epochs < max_epochs and eta >= 2, got min_epochs={s.min_epochs}, "
                            f"max_epochs={s.max_epochs}, eta={s.eta}")
        if inputs.features is None or inputs.features.shape[0] != inputs.search.n:
            raise UserError("dehb needs a feature matrix with one row per architecture (setting 'features')")
        evaluator = FidelityEvaluator(inputs.features, s.penalty)
        self._low, self._high = evaluator.box()
        self._folder = tempfile.TemporaryDirectory(prefix="nasbench-dehb-")
        self._dehb = DEHB(f=None, cs=None, dimensions=inputs.features.shape[1], min_fidelity=s.min_epochs,
                          max_fidelity=s.max_epochs, eta=s.eta, mutation_factor=s.mutation_factor,
                          crossover_prob=s.crossover_prob, seed=int(inputs.seed), n_workers=1,
                          output_path=self._folder.name, save_freq="end", log_level="CRITICAL")
        logger.remove()                          # DEHB's stdout and file sinks
        self._begin(evaluator)

    def _propose(self):
        info = self._dehb.ask()
        vector = self._low + np.clip(np.asarray(info["config"], dtype=float), 0, 1) * (self._high - self._low)
        return info, vector, epochs_of(info["fidelity"])

    def _answer(self, info, fitness: float, cost_s: float) -> None:
        self._dehb.tell(info, {"fitness": float(fitness), "cost": float(cost_s)})

    def finish(self) -> None:
        folder = getattr(self, "_folder", None)
        if folder is not None:
            from loguru import logger

            logger.remove()
            folder.cleanup()
            self._folder = None


def epochs_of(fidelity: float) -> int:
    """DEHB's fidelity as whole epochs (rounded half up, at least 1)."""
    return max(1, int(np.floor(float(fidelity) + 0.5)))
