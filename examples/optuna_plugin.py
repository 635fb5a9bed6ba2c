"""An Optuna-based plugin: TPE over any benchmark's native choices (wt2, ptb, bert), snapped.

    pip install -e '.[libs]'
    nasbench run --algo examples/optuna_plugin.py:OptunaSpaceTPE --benchmark wt2 --trials 30

Optuna's ask/tell interface fits nasbench's: each `ask` asks the study for a trial, suggests the
space's choices define-by-run (`suggest_optuna`: only the choices active for the values drawn so far),
builds the architecture and snaps it to the nearest untrained evaluated one; `tell` reports that
one's validation loss for the trial. Every evaluation is at the benchmark's full fidelity.
"""
import math
from dataclasses import dataclass

from nasbench import Algorithm, Job


class OptunaSpaceTPE(Algorithm):
    name = "optuna-space-tpe"
    description = "Optuna TPESampler over the space's conditional choices, proposals snapped"
    needs = frozenset({"configspace", "encoding", "distance"})
    requires = {"optuna": "pip install optuna"}

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"     # the space's own encoding: snapping measures distance on it
        startup_trials: int = 10       # random proposals before TPE's model

    def start(self, inputs):
        import optuna

        from benchmarks.core.space import Snapper

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.space, self.epochs = inputs.search.space, inputs.search.max_epochs
        self.choices = self.space.choices()
        self.snapper = Snapper(self.space, inputs.features, inputs.rng)
        sampler = optuna.samplers.TPESampler(seed=inputs.seed, n_startup_trials=self.settings.startup_trials)
        self.study = optuna.create_study(sampler=sampler, direction="minimize")
        self.trial_of = {}

    def ask(self):
        from benchmarks.core.space import suggest_optuna

        trial = self.study.ask()
        row = self.snapper.snap(self.space.from_values(suggest_optuna(trial, self.choices)))
        if row is None:                                    # every evaluated architecture is trained
            self.study.tell(trial, state=__import__("optuna").trial.TrialState.FAIL)
            return None
        job = Job(row, self.epochs)
        self.trial_of[id(job)] = trial
        return job

    def tell(self, job, observation):
        loss = observation.last_val_loss
        ok = observation.status == "OK" and math.isfinite(loss)
        self.study.tell(self.trial_of.pop(id(job)), loss if ok else 10.0)   # a diverged run scores badly
