"""Optuna: TPE sampler with a Hyperband (or successive-halving) pruner over epochs (`optuna`).

Each Optuna trial is one architecture: its parameters x0..x{d-1} are floats over the box of the
graph2vec features (`features`), snapped to the nearest architecture no other trial holds
(`fidelity_evaluation`). The trial trains to the rung levels 1, 3, 9, 27, 50 epochs (grace 1,
eta 3, R = 50), each step a job continuing from its checkpoint; after each step it reports the
validation log-perplexity at that epoch (`trial.report`) and asks the pruner (`should_prune`). A pruned
trial stops (told PRUNED); one that reaches R is told its value; a diverged run is told `penalty`.

Driven through Optuna's ask/tell interface (`study.ask`, `study.tell`) with an in-memory study named
"nasbench" (the Hyperband pruner assigns brackets by hashing the study name with the trial number, so
a fixed name keeps trials reproducible), `TPESampler(seed=trial seed, n_startup_trials=10)`, and
`HyperbandPruner(min_resource=1, max_resource=50, reduction_factor=3)` (4 brackets). With K workers
continuations of unpruned trials go first, then new trials; TPE's `constant_liar` treats running
trials as bad, so parallel proposals spread out (Optuna's own advice for parallel TPE).
"""
import math
import warnings
from collections import deque
from dataclasses import dataclass

from benchmarks.core.errors import UserError
from optimizers.multi_fidelity.asha import rung_levels
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.libraries.fidelity_evaluation import FidelityEvaluator
from optimizers.model_based.smac_search import labels
from optimizers.libraries.snapped_evaluation import quiet_logger
from optimizers.libraries.space_search import NativeSpaceSearch


class OptunaTPE(Algorithm):
    name = "optuna"
    needs = frozenset({"epochs", "graph2vec"})
    requires = {"optuna": "pip install 'nasbench[libs]' (in a clone: pip install -e '.[libs]')"}
    description = "Optuna TPE sampler + Hyperband pruner over epochs (1, 3, 9, 27, 50), 10-d graph2vec box"

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # the box the sampler proposes in
        pruner: str = "hyperband"       # 'hyperband' or 'sh' (successive halving, one bracket)
        grace_epochs: int = 1           # the first rung (Optuna's min_resource)
        max_epochs: int = 50            # R (max_resource)
        eta: int = 3                    # reduction factor
        startup_trials: int = 10        # TPE's random start
        penalty: float = 10.0           # objective of a diverged run (log-perplexity units)
        constant_liar: bool = True      # with K > 1 workers: running trials count as bad

    def start(self, inputs: SearchInputs) -> None:
        import optuna

        s = self.settings
        if s.pruner not in ("hyperband", "sh"):
            raise UserError(f"optuna: pruner must be 'hyperband' or 'sh', got {s.pruner!r}")
        self._levels = rung_levels(s.grace_epochs, s.eta, s.max_epochs)
        if inputs.features is None or inputs.features.shape[0] != inputs.search.n:
            raise UserError("optuna needs a feature matrix with one row per architecture (setting 'features')")
        self._evaluate = FidelityEvaluator(inputs.features, s.penalty)
        low, high = self._evaluate.box()
        self._space = list(zip(labels(inputs.features.shape[1]), low.tolist(), high.tolist()))
        self._quiet = quiet_logger("optuna")
        self._quiet.__enter__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # ExperimentalWarning for constant_liar
            sampler = optuna.samplers.TPESampler(seed=int(inputs.seed), n_startup_trials=s.startup_trials,
                                                 constant_liar=bool(s.constant_liar and inputs.workers > 1))
        if s.pruner == "hyperband":
            pruner = optuna.pruners.HyperbandPruner(min_resource=s.grace_epochs, max_resource=s.max_epochs,
                                                    reduction_factor=s.eta)
        else:
            pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=s.grace_epochs, reduction_factor=s.eta)
        self._study = optuna.create_study(study_name="nasbench", sampler=sampler, pruner=pruner,
                                          direction="minimize")
        self._trial_of: dict[int, object] = {}    # row -> its Optuna trial
        self._rung_of: dict[int, int] = {}        # row -> index of the rung its current job reaches
        self._continue: deque = deque()           # jobs of unpruned trials, next rung
        self._done = False

    def ask(self) -> Job | None:
        if self._evaluate.ready:
            return self._evaluate.ready.popleft()
        if self._continue:
            return self._continue.popleft()
        if self._done:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial = self._study.ask()
            vector = [trial.suggest_float(name, lo, hi) for name, lo, hi in self._space]
        row = self._evaluate.architecture(vector)
        if row is None:                           # every architecture belongs to a trial
            self._study.tell(trial, state=_state("FAIL"))
            self._done = True
            return None
        self._trial_of[row], self._rung_of[row] = trial, 0
        return self._evaluate.request(row, row, self._levels[0])

    def tell(self, job: Job, observation) -> None:
        for row, value in self._evaluate.observe(job, observation):
            self._step_done(row, value)

    def _step_done(self, row: int, value: float) -> None:
        trial, rung = self._trial_of[row], self._rung_of[row]
        epochs = self._levels[rung]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if row in self._evaluate.diverged or value >= self.settings.penalty:
                self._study.tell(trial, self.settings.penalty)
            elif epochs == self._levels[-1]:
                self._study.tell(trial, value)
            else:
                trial.report(value, step=epochs)
                if trial.should_prune():
                    self._study.tell(trial, state=_state("PRUNED"))
                else:
                    self._rung_of[row] = rung + 1
                    job = self._evaluate.request(row, row, self._levels[rung + 1])
                    if isinstance(job, Job):
                        self._continue.append(job)
                    elif job is not None:                 # already paid for: the next step at once
                        self._step_done(row, job)

    def finish(self) -> None:
        quiet = getattr(self, "_quiet", None)
        if quiet is not None:
            quiet.__exit__(None, None, None)
            self._quiet = None


def _state(name: str):
    import optuna

    return getattr(optuna.trial.TrialState, name)


class SpaceOptuna(NativeSpaceSearch):
    """`optuna` in a benchmark's native space: Optuna's TPESampler through ask/tell, define-by-run over
    its conditional choices, each proposal snapped (the library adapter for single-fidelity spaces)."""
    name = "optuna"
    description = "Optuna TPE over the native space (define-by-run), snapped by the space's distance"
    requires = {"optuna": "pip install 'nasbench[libs]' (in a clone: pip install -e '.[libs]')"}

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"       # the space's own encoding (snapping)
        startup_trials: int = 10        # TPESampler n_startup_trials
        constant_liar: bool = True      # with K > 1 workers: running trials count as bad

    def _begin(self, inputs: SearchInputs) -> None:
        import optuna

        self._quiet = quiet_logger("optuna")
        self._quiet.__enter__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # ExperimentalWarning for constant_liar
            sampler = optuna.samplers.TPESampler(seed=int(inputs.seed), n_startup_trials=self.settings.startup_trials,
                                                 constant_liar=bool(self.settings.constant_liar and inputs.workers > 1))
        self._study = optuna.create_study(study_name="nasbench-space", sampler=sampler, direction="minimize")

    def _propose(self):
        from benchmarks.core.space import suggest_optuna

        trial = self._study.ask()
        return trial, self._space.from_values(suggest_optuna(trial, self._space.choices()))

    def _abandon(self, trial) -> None:
        from optuna.trial import TrialState

        self._study.tell(trial, state=TrialState.FAIL)

    def _report(self, trial, loss: float) -> None:
        self._study.tell(trial, float(loss) if math.isfinite(loss) else 0.0)

    def finish(self) -> None:
        quiet = getattr(self, "_quiet", None)
        if quiet is not None:
            quiet.__exit__(None, None, None)
