"""Optuna's multi-objective samplers through the library adapter: NSGA-II (`nsga2`) and multi-objective
TPE (`motpe`), define-by-run over the benchmark's native space (recipes on cells, FlexiBERT choices on
bert), each proposal snapped to the nearest untrained evaluated architecture and trained at full
fidelity (`space_search.NativeSpaceSearch`). The study has one direction per objective (`minimize`,
`maximize` for GLUE points); a run that diverged is told FAIL (NSGA-II and TPE leave failed trials out).
"""
import math
import warnings
from dataclasses import dataclass

from optimizers.base import Job, SearchInputs
from optimizers.multi_objective.algorithms import _MultiObjective
from optimizers.libraries.snapped_evaluation import quiet_logger
from optimizers.libraries.space_search import NativeSpaceSearch

REQUIRES = {"optuna": "pip install 'nasbench[libs]' (in a clone: pip install -e '.[libs]')"}


class _OptunaMultiObjective(_MultiObjective, NativeSpaceSearch):
    requires = REQUIRES

    def _sampler(self, inputs: SearchInputs):
        raise NotImplementedError

    def _begin(self, inputs: SearchInputs) -> None:
        import optuna

        from benchmarks.core.objectives import OBJECTIVES

        self._begin_objectives(inputs)
        self._quiet = quiet_logger("optuna")
        self._quiet.__enter__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # ExperimentalWarning (constant_liar, multi-objective TPE)
            sampler = self._sampler(inputs)
        directions = ["maximize" if OBJECTIVES[name].maximise else "minimize" for name in self._objectives]
        self._study = optuna.create_study(study_name=f"nasbench-{self.name}", sampler=sampler, directions=directions)

    def _propose(self):
        from benchmarks.core.space import suggest_optuna

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trial = self._study.ask()
            return trial, self._space.from_values(suggest_optuna(trial, self._space.choices()))

    def _abandon(self, trial) -> None:
        from optuna.trial import TrialState

        self._study.tell(trial, state=TrialState.FAIL)

    def tell(self, job: Job, observation) -> None:
        from optuna.trial import TrialState

        trial = self._pending.pop(id(job))
        values = [float((observation.objectives or {}).get(name, math.nan)) for name in self._objectives]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if observation.status != "OK" or not all(math.isfinite(v) for v in values):
                self._study.tell(trial, state=TrialState.FAIL)
            else:
                self._study.tell(trial, values)

    def finish(self) -> None:
        quiet = getattr(self, "_quiet", None)
        if quiet is not None:
            quiet.__exit__(None, None, None)
            self._quiet = None


class NSGA2(_OptunaMultiObjective):
    name = "nsga2"
    description = "Optuna NSGA-II over the native space (define-by-run), snapped; population 20 (extra: libs)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"       # the space's own encoding (snapping)
        population: int = 20             # NSGAIISampler population_size (a few hundred evaluations per trial)

    def _sampler(self, inputs: SearchInputs):
        import optuna

        return optuna.samplers.NSGAIISampler(population_size=int(self.settings.population), seed=int(inputs.seed))


class MOTPE(_OptunaMultiObjective):
    name = "motpe"
    description = "Optuna multi-objective TPE over the native space (define-by-run), snapped (extra: libs)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"       # the space's own encoding (snapping)
        startup_trials: int = 10         # TPESampler n_startup_trials
        constant_liar: bool = True       # with K > 1 workers: running trials count as bad

    def _sampler(self, inputs: SearchInputs):
        import optuna

        return optuna.samplers.TPESampler(seed=int(inputs.seed), n_startup_trials=int(self.settings.startup_trials),
                                          constant_liar=bool(self.settings.constant_liar and inputs.workers > 1))
