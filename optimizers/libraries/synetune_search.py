"""syne-tune's schedulers (syne-tune 0.16) driven by the simulator: `st-rs`, `st-bore`, `st-kde`, `st-rea`
(one full-fidelity evaluation per configuration), `st-asha`, `st-bohb`, `st-asha-bore` (epochs as the
resource, a stop decision after every epoch), `st-moasha`, `st-mo-rea` (multi-objective, `--objectives`).

Our simulator owns the clock and the workers, syne-tune owns the decisions, through its scheduler
interface (what its `Tuner` calls): `suggest()` gives a new configuration; each reported result goes
to `on_trial_result(trial, result)`, whose CONTINUE / STOP (or PAUSE) decides whether the trial trains
on; a trial that reaches the last epoch goes to `on_trial_complete`, a stopped one to
`on_trial_remove`, as the `Tuner` does.

- **Configurations are architectures.** The configuration space is the box of the feature matrix
  named by `features` (the 10-d graph2vec on cells as dehb, optuna and smac-mf; the space's own
  encoding on the other benchmarks): one `uniform(low, high)` per dimension that varies. A suggested
  configuration is snapped to the nearest architecture by cosine distance among those no earlier
  configuration holds, so every syne-tune trial is its own architecture and a trial ends when none
  is left.
- **Multi-fidelity schedulers** (the ASHA family) see one result per epoch, as from a training script
  that reports every epoch: each job trains one more epoch from the checkpoint (charged that epoch's
  recorded time), then the scheduler decides. **Single-fidelity** ones see one result, at the full
  fidelity (`max_epochs`, the benchmark's).
- **The metric** is the validation loss of the benchmark (log-perplexity; minus BLEU on nmt-*), or
  `penalty` for a run that diverged or has no finite loss (it then completes: it cannot train on).
  Multi-objective schedulers get the run's objectives in minimisation form; a run without a finite
  value for each is an error trial (`on_trial_error`).
- **The library's suggestions, in less CPU.** BORE (`st-bore`, `st-asha-bore`) and the kernel-density
  searcher (`st-kde`, `st-bohb`) compute their acquisition's candidates in one batch (`synetune_bore`,
  `synetune_kde`), where syne-tune 0.16 makes a call per candidate: the same suggestions, bit for bit.
- **Same seed, same result.** The scheduler gets the trial's seed; syne-tune also draws from NumPy's
  global generator (ASHA's bracket draw, BORE's evolution), which is seeded with the trial's seed for
  the trial and restored after it.

Not in syne-tune 0.16, so not here: DyHPO, Hyper-Tune and MOBSTER (its Gaussian-process searchers
were removed in the 0.14 rewrite); EHVI / BoTorch (they need botorch); CQR and ASHA-CQR (their surrogate
module imports syne-tune's blackbox repository, which needs huggingface_hub and its HTTP stack for
downloads these tables never make). The library is installed
with `pip install 'nasbench[synetune]' && pip install --no-deps syne-tune==0.16.0` (its metadata asks
for the full xgboost with CUDA libraries; xgboost-cpu serves it).
"""
from __future__ import annotations

import logging
import math
import os
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.libraries.synetune_bore import use_batched_bore     # NumPy only: syne-tune loads on use
from optimizers.libraries.synetune_kde import use_batched_kde

INSTALL = ("pip install 'nasbench[synetune]' && pip install --no-deps syne-tune==0.16.0 (its metadata "
           "asks for xgboost with CUDA libraries; xgboost-cpu, which nasbench installs, serves it)")
RESOURCE = "epoch"          # the resource attribute of every reported result (epochs trained)
METRIC = "loss"             # the single-objective metric's name in results


class SyneTuneSearch(Algorithm):
    """Base class: subclasses name `scheduler` (syne-tune's class in `syne_tune.optimizer.baselines`, or
    a `_make` override) and say whether it is `multi_fidelity`."""
    scheduler: ClassVar[str] = ""
    multi_fidelity: ClassVar[bool] = False
    requires = {"syne_tune": INSTALL, "statsmodels": INSTALL}
    full_fidelity_setting = "max_epochs"

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # the box configurations live in (the space's encoding off cells)
        max_epochs: int = 50            # the full fidelity (the benchmark's: make_algorithm sets it)
        penalty: float = 10.0           # metric of a diverged run (loss units)

    @classmethod
    def adapt_settings(cls, settings, spec):
        """Off recurrent cells (no graph2vec), the box is the space's own encoding."""
        from dataclasses import replace

        if "graph2vec" not in spec.offers and settings.features == cls.Settings().features:
            return replace(settings, features=spec.encoding_kind)
        return settings

    # -- set-up -----------------------------------------------------------------------------------

    def start(self, inputs: SearchInputs) -> None:
        from optimizers.snapping import unit_rows

        s = self.settings
        if s.max_epochs < 1 or not math.isfinite(s.penalty):
            raise UserError(f"{self.name} needs max_epochs >= 1 and a finite penalty")
        if inputs.features is None or inputs.features.shape[0] != inputs.search.n:
            raise UserError(f"{self.name} needs a feature matrix with one row per architecture (setting 'features')")
        if self.multi_objective and len(inputs.objectives) < 2:
            raise UserError(f"{self.name} searches a front: give two or three --objectives")
        self._global_state = np.random.get_state()      # restored in finish()
        np.random.seed(int(inputs.seed) % 2**32)
        logger = logging.getLogger("syne_tune")         # its per-trial warnings ("Evaluation failed!" for a
        self._log_level = logger.level                  # diverged run) would flood the run's output
        logger.setLevel(logging.ERROR)
        self._root_filter = LibraryWarnings()           # BORE warns through the root logger
        logging.getLogger().addFilter(self._root_filter)
        # statsmodels' kernel densities (st-kde, st-bohb) announce that their default generator will change
        # in 0.17 / 2028; today they draw from NumPy's global one, seeded above, which this pins
        warnings.filterwarnings("ignore", message=".*entropy initialized numpy.random.Generator",
                                category=FutureWarning)
        features = np.asarray(inputs.features, dtype=np.float64)
        self._low, self._high = features.min(axis=0), features.max(axis=0)
        self._varying = np.flatnonzero(self._high > self._low)
        self._features = unit_rows(features)
        self._assigned = np.zeros(inputs.search.n, dtype=bool)
        self._objectives = tuple(inputs.objectives) if self.multi_objective else ()
        self._scheduler = self._make(self._config_space(), inputs)
        self._trials: dict = {}            # trial_id -> syne-tune Trial
        self._row: dict = {}               # trial_id -> architecture row
        self._reached: dict = {}           # trial_id -> epochs trained
        self._job_trial: dict = {}         # id(job) -> trial_id
        self._ready: list = []             # trial ids to train one more epoch, first come first
        self._exhausted = False

    def _config_space(self) -> dict:
        from syne_tune.config_space import uniform

        return {f"x{k}": uniform(float(self._low[k]), float(self._high[k])) for k in self._varying}

    def _make(self, config_space: dict, inputs: SearchInputs):
        """The scheduler, from syne-tune's baselines with its defaults."""
        from syne_tune.optimizer import baselines

        cls = getattr(baselines, self.scheduler)
        seed = int(inputs.seed)
        if self.multi_fidelity:
            return cls(config_space, metric=METRIC, time_attr=RESOURCE, max_t=int(self.settings.max_epochs),
                       do_minimize=True, random_seed=seed)
        if self.scheduler == "RandomSearch":
            return cls(config_space, metrics=[METRIC], do_minimize=True, random_seed=seed)
        return cls(config_space, metric=METRIC, do_minimize=True, random_seed=seed)

    # -- the protocol -----------------------------------------------------------------------------

    def ask(self) -> Job | None:
        while self._ready:
            trial_id = self._ready.pop(0)
            if trial_id in self._trials:
                return self._job(trial_id)
        if self._exhausted:
            return None
        suggestion = self._scheduler.suggest()
        if suggestion is None:
            self._exhausted = True
            return None
        if not suggestion.spawn_new_trial_id:                    # resume a paused trial
            trial_id = suggestion.checkpoint_trial_id
            return self._job(trial_id)
        row = self._snap(suggestion.config)
        if row is None:                                          # every architecture has a configuration
            self._exhausted = True
            return None
        from datetime import datetime

        from syne_tune.backend.trial_status import Trial

        trial_id = len(self._row)
        trial = Trial(trial_id=trial_id, config=dict(suggestion.config), creation_time=datetime(2020, 1, 1))
        self._trials[trial_id], self._row[trial_id], self._reached[trial_id] = trial, row, 0
        self._scheduler.on_trial_add(trial)
        return self._job(trial_id)

    def _job(self, trial_id: int) -> Job:
        epochs = self._reached[trial_id] + 1 if self.multi_fidelity else int(self.settings.max_epochs)
        job = Job(self._row[trial_id], min(epochs, int(self.settings.max_epochs)))
        self._job_trial[id(job)] = trial_id
        return job

    def _snap(self, config: dict) -> int | None:
        from optimizers.snapping import nearest_by_cosine

        if self._assigned.all():
            return None
        vector = self._low.copy()
        for k in self._varying:
            vector[k] = float(config[f"x{k}"])
        row = nearest_by_cosine(self._features, vector, exclude=self._assigned)
        self._assigned[row] = True
        return row

    def tell(self, job: Job, observation) -> None:
        from syne_tune.optimizer.scheduler import SchedulerDecision

        trial_id = self._job_trial.pop(id(job))
        trial = self._trials[trial_id]
        first = self._reached[trial_id]
        self._reached[trial_id] = observation.epochs
        ended = observation.diverged or observation.epochs < job.epochs or observation.epochs >= self.settings.max_epochs
        result = self._result(observation, observation.epochs)
        if result is None:                                       # multi-objective: no finite objectives
            self._scheduler.on_trial_error(trial)
            self._forget(trial_id)
            return
        if self.multi_fidelity and observation.epochs - first > 1:
            raise RuntimeError(f"{self.name}: a job trained {observation.epochs - first} epochs, not one")
        decision = self._scheduler.on_trial_result(trial, result)
        if ended:
            self._scheduler.on_trial_complete(trial, result)
            self._forget(trial_id)
        elif decision == SchedulerDecision.CONTINUE:
            self._ready.append(trial_id)
        elif decision == SchedulerDecision.PAUSE:              # kept in _trials: suggest() may resume it
            self._scheduler.on_trial_remove(trial)
        else:                                                    # STOP
            self._scheduler.on_trial_remove(trial)
            self._forget(trial_id)

    def _result(self, observation, epoch: int) -> dict | None:
        """The result dict syne-tune reads for `observation` at `epoch` (None: no finite objectives)."""
        if self.multi_objective:
            from optimizers.multi_objective.algorithms import objective_vector

            vector = objective_vector(observation, self._objectives)
            if not np.isfinite(vector).all():
                return None
            return {RESOURCE: int(epoch), **{name: float(v) for name, v in zip(self._objectives, vector)}}
        loss = observation.last_val_loss
        if observation.diverged or not math.isfinite(loss):
            loss = float(self.settings.penalty)
        return {RESOURCE: int(epoch), METRIC: float(loss)}

    def _forget(self, trial_id: int) -> None:
        self._trials.pop(trial_id, None)

    def finish(self) -> None:
        state = getattr(self, "_global_state", None)
        if state is not None:
            np.random.set_state(state)
            logging.getLogger("syne_tune").setLevel(self._log_level)
            logging.getLogger().removeFilter(self._root_filter)
            self._global_state = None


class LibraryWarnings(logging.Filter):
    """Drops records below ERROR that syne-tune's own modules log through the root logger (`logging.warning`:
    BORE's "Assigned all samples to the same class ... Return a random configuration instead" when every
    result so far is equal), as its own logger is set to ERROR: the run's output is ours."""

    def __init__(self):
        super().__init__()
        import syne_tune

        self._package = os.path.dirname(os.path.abspath(syne_tune.__file__)) + os.sep

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not os.path.abspath(record.pathname).startswith(self._package)


class SingleFidelity(SyneTuneSearch):
    needs = frozenset()


class MultiFidelity(SyneTuneSearch):
    multi_fidelity = True
    needs = frozenset({"epochs"})


class STRandomSearch(SingleFidelity):
    name, scheduler = "st-rs", "RandomSearch"
    description = "syne-tune RandomSearch, full fidelity, in the feature box, snapped (extra: synetune)"


class BatchedSearcher:
    """Mixin: syne-tune's searcher with its candidates computed in one batch (`batching`, applied to the
    scheduler: `use_batched_bore` or `use_batched_kde`): the library's suggestions, bit for bit, in a
    fraction of the CPU."""
    batching: ClassVar = None

    def _make(self, config_space: dict, inputs: SearchInputs):
        scheduler = super()._make(config_space, inputs)
        self.batching(scheduler)
        return scheduler


class STBORE(BatchedSearcher, SingleFidelity):
    name, scheduler = "st-bore", "BORE"
    batching = staticmethod(use_batched_bore)
    description = "syne-tune BORE (density-ratio BO, Tiao et al. 2021), full fidelity, snapped (extra: synetune)"


class STKDE(BatchedSearcher, SingleFidelity):
    name, scheduler = "st-kde", "TPE"
    batching = staticmethod(use_batched_kde)
    description = "syne-tune TPE (kernel-density estimators), full fidelity, snapped (extra: synetune)"


class STREA(SingleFidelity):
    name, scheduler = "st-rea", "REA"
    description = "syne-tune regularized evolution, full fidelity, snapped (extra: synetune)"


class STASHA(MultiFidelity):
    name, scheduler = "st-asha", "ASHA"
    description = "syne-tune ASHA (stopping), epochs as resource, grace 1, eta 3 (extra: synetune)"


class STBOHB(BatchedSearcher, MultiFidelity):
    name, scheduler = "st-bohb", "BOHB"
    batching = staticmethod(use_batched_kde)
    description = "syne-tune BOHB (ASHA + kernel densities), epochs as resource (extra: synetune)"


class STASHABORE(BatchedSearcher, MultiFidelity):
    name, scheduler = "st-asha-bore", "ASHABORE"
    batching = staticmethod(use_batched_bore)
    description = "syne-tune ASHA with a BORE model per rung, epochs as resource (extra: synetune)"


class STMOASHA(MultiFidelity):
    name, scheduler = "st-moasha", "MOASHA"
    multi_objective = True
    description = "syne-tune MOASHA (non-dominated sorting priority), epochs as resource; needs --objectives"

    def _make(self, config_space: dict, inputs: SearchInputs):
        from syne_tune.optimizer.schedulers.multiobjective.moasha import MOASHA

        return MOASHA(config_space, metrics=list(self._objectives), do_minimize=True, time_attr=RESOURCE,
                      max_t=int(self.settings.max_epochs), random_seed=int(inputs.seed))


class STMOREA(SingleFidelity):
    name, scheduler = "st-mo-rea", "MultiObjectiveRegularizedEvolution"
    multi_objective = True
    description = "syne-tune multi-objective regularized evolution, full fidelity; needs --objectives"

    def _make(self, config_space: dict, inputs: SearchInputs):
        from syne_tune.optimizer.schedulers.single_fidelity_scheduler import SingleFidelityScheduler

        return SingleFidelityScheduler(config_space, metrics=list(self._objectives), do_minimize=True,
                                       searcher="regularized_evolution", random_seed=int(inputs.seed))
