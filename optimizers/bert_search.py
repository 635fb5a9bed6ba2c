"""Search on NAS-Bench-BERT (`--benchmark bert`): one evaluation per architecture, no epochs.

Every algorithm here asks for `Job(row, 1)`: the one "epoch" of a bert row is the whole training
(`time_to_train` seconds). Each observation's validation loss is minus the GLUE average
(benchmarks.bert.table), so lower is better as everywhere else.

- `bert-rs`: random search over the 500 evaluated architectures.
- `bert-bo`: the paper's bagged-XGBoost BO with LCB, over the 38-number encoding.
- `bert-re`: regularized evolution with the natural mutation (one choice of the FlexiBERT space
  changed, `FlexiBertSpace.mutate`), the child snapped to the nearest untrained evaluated architecture.
- `bert-tpe`: hyperopt's TPE over the native space (categorical choices, layers 3-4 conditional on
  the layer count), each proposal snapped.
- `bert-optuna`: Optuna's TPESampler through ask/tell, define-by-run over the native space (the
  library adapter that applies here: DEHB and SMAC's multi-fidelity facade need epochs).
- `bert-smac`: SMAC3's HPO facade over the native ConfigSpace (`benchmarks.bert.configspace`), each
  proposal snapped; SMAC minimises 100 - GLUE (positive, as its log-cost forest needs).

Snapping: a proposal is encoded and replaced by the untrained evaluated architecture nearest in
Hamming distance on the encoding (ties broken by a random order drawn once per trial), so every
proposal trains a new architecture; the library is told the snapped architecture's result for its
own proposal. A trial ends when the budget is spent or all 500 are trained.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchmarks.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.bayesian import BayesianOptimisation
from optimizers.evolution import RegularizedEvolution
from optimizers.random_search import RandomSearch

def bert_space(inputs: SearchInputs, name: str):
    """The FlexiBERT space and per-row architectures of a bert table; UserError elsewhere."""
    from benchmarks.bert.table import architectures

    space = getattr(inputs.search, "space", None)
    if space is None or not hasattr(space, "mutate"):
        raise UserError(f"{name} runs on --benchmark bert only")
    return space, architectures(inputs.search)


class HammingSnapper:
    """Proposals (architectures) -> the nearest untrained evaluated row by Hamming distance."""

    def __init__(self, space, encodings: np.ndarray, rng: np.random.Generator):
        self.space, self.encodings = space, np.asarray(encodings)
        self.trained = np.zeros(len(self.encodings), dtype=bool)
        self.tie_rank = rng.permutation(len(self.encodings))
        self.distances: list[int] = []          # per snap: Hamming distance to the chosen row

    def snap(self, arch, mark: bool = True) -> int | None:
        """The chosen row (marked trained unless `mark` is False), or None when every row is trained."""
        if self.trained.all():
            return None
        from benchmarks.bert.space import hamming

        distance = np.where(self.trained, np.iinfo(np.int64).max, hamming(self.encodings, self.space.encode(arch)))
        best = np.flatnonzero(distance == distance.min())
        row = int(best[np.argmin(self.tie_rank[best])])
        self.trained[row] = mark or self.trained[row]
        self.distances.append(int(distance[row]))
        return row


class BertRandomSearch(RandomSearch):
    name = "bert-rs"
    description = "random search over the 500 NAS-Bench-BERT architectures (bert)"

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 1           # bert has one evaluation per architecture


class BertBO(BayesianOptimisation):
    name = "bert-bo"
    description = "bagged-XGBoost BO + LCB over the 38-number FlexiBERT encoding (bert)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "bert-encoding"  # the one-hot/0-1 FlexiBERT encoding
        initial: int = 10               # random architectures before the first model (of ~50 evaluations)
        epochs: int = 1                 # one evaluation per architecture
        bags: int = 14
        bag_fraction: float = 0.5
        bootstrap: bool = True
        n_estimators: int = 100
        max_depth: int = 15
        beta: float = 2.0
        refit_every: int = 1            # refit after every evaluation (they are few and costly)
        tree_method: str = "exact"


class BertRegularizedEvolution(RegularizedEvolution):
    name = "bert-re"
    description = "regularized evolution, natural FlexiBERT mutation snapped by Hamming distance (bert)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "bert-encoding"  # the encoding snapping measures Hamming distance on
        population: int = 10            # P (of ~50 evaluations)
        sample: int = 5                 # S, tournament size
        noise_stds: tuple[float, ...] = (1.0,)   # unused on bert (mutation is natural, not noise)
        epochs: int = 1
        new_children_only: bool = True  # always: a child is an untrained architecture

    def start(self, inputs: SearchInputs) -> None:
        self._space, self._archs = bert_space(inputs, self.name)
        super().start(inputs)
        self._snapper = HammingSnapper(self._space, inputs.features, inputs.rng)
        self._snapper.trained = self._trained    # one mask: initial members count as trained

    def _mutate(self, features, parent, low, high, stds, trained, rng) -> int | None:
        child = self._space.mutate(self._archs[parent], rng)
        return self._snapper.snap(child, mark=False)     # the RE loop marks what it hands out


class BertTPE(Algorithm):
    name = "bert-tpe"
    description = "hyperopt TPE over the native FlexiBERT space, proposals snapped by Hamming distance (bert)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "bert-encoding"
        n_startup_jobs: int = 10        # random proposals before the model (tpe.suggest default: 20)
        n_ei_candidates: int = 24       # tpe.suggest default
        gamma: float = 0.25             # tpe.suggest default

    def start(self, inputs: SearchInputs) -> None:
        from functools import partial

        from hyperopt import Trials, base, tpe

        self._space, _ = bert_space(inputs, self.name)
        self._snapper = HammingSnapper(self._space, inputs.features, inputs.rng)
        self._hp_space = hyperopt_space(self._space)
        self._domain = base.Domain(_not_called, self._hp_space)
        self._trials = Trials()
        self._suggest = partial(tpe.suggest, n_startup_jobs=self.settings.n_startup_jobs,
                                n_EI_candidates=self.settings.n_ei_candidates, gamma=self.settings.gamma)
        self._rng = inputs.rng
        self._doc_of: dict = {}           # id(job) -> its hyperopt trial doc

    def ask(self) -> Job | None:
        from hyperopt import base, space_eval

        from optimizers.snapped_evaluation import quiet_logger

        with quiet_logger("hyperopt"):
            new_id = self._trials.new_trial_ids(1)
            self._trials.refresh()
            docs = self._suggest(new_id, self._domain, self._trials, int(self._rng.integers(2**31 - 1)))
        doc = docs[0]
        doc["state"] = base.JOB_STATE_RUNNING
        self._trials.insert_trial_docs(docs)
        self._trials.refresh()
        config = flatten(space_eval(self._hp_space, base.spec_from_misc(doc["misc"])))
        from benchmarks.bert.configspace import from_configuration

        row = self._snapper.snap(from_configuration(self._space, config))
        if row is None:
            return None
        job = Job(row, 1)
        self._doc_of[id(job)] = doc["tid"]
        return job

    def tell(self, job: Job, observation) -> None:
        from hyperopt import base

        tid = self._doc_of.pop(id(job))
        loss = observation.last_val_loss
        for doc in self._trials._dynamic_trials:
            if doc["tid"] == tid:
                doc["state"] = base.JOB_STATE_DONE
                doc["result"] = {"loss": float(loss) if math.isfinite(loss) else 0.0, "status": base.STATUS_OK}
        self._trials.refresh()


def hyperopt_space(space) -> dict:
    """hyperopt's version of the native space: every choice an `hp.choice`; layers above the
    smallest count live in the branch of `num_encoder_layers` that has them."""
    from hyperopt import hp

    def layer(k):
        return {f"layer{k}_operation": hp.choice(f"layer{k}_operation", [f"{t}:{p}" for t, p in space.operations]),
                f"layer{k}_heads": hp.choice(f"layer{k}_heads", list(space.heads)),
                f"layer{k}_ff_dimension": hp.choice(f"layer{k}_ff_dimension", list(space.ff_dimensions)),
                f"layer{k}_ff_count": hp.choice(f"layer{k}_ff_count", list(space.ff_counts))}

    low = min(space.layer_counts)
    base = {"hidden_size": hp.choice("hidden_size", list(space.hidden_sizes))}
    for k in range(1, low + 1):
        base.update(layer(k))
    branches = []
    for count in space.layer_counts:
        branch = {"num_encoder_layers": count}
        for k in range(low + 1, count + 1):
            branch.update(layer(k))
        branches.append(branch)
    base["upper"] = hp.choice("num_encoder_layers", branches)
    return base


def flatten(values: dict) -> dict:
    out = {k: v for k, v in values.items() if k != "upper"}
    out.update(values["upper"])
    return out


class BertSMAC(Algorithm):
    name = "bert-smac"
    description = "SMAC3 HPO facade over the native FlexiBERT ConfigSpace, proposals snapped by Hamming distance (bert)"

    @dataclass(frozen=True)
    class Settings:
        features: str = "bert-encoding"
        initial: int = 10               # random initial configurations (of ~50 evaluations)
        retrain_after: int = 1          # surrogate retrained after every configuration
        n_trials: int = 1_000_000       # SMAC's trial limit; the simulated budget ends a trial first

    def start(self, inputs: SearchInputs) -> None:
        import tempfile
        from contextlib import ExitStack
        from pathlib import Path

        from smac import HyperparameterOptimizationFacade, Scenario
        from smac.initial_design import RandomInitialDesign

        from benchmarks.bert.configspace import configuration_space
        from optimizers.smac_search import _order_local_search_starts, single_threaded_model
        from optimizers.snapped_evaluation import quiet_logger

        if self.settings.initial < 1 or self.settings.retrain_after < 1 or self.settings.n_trials < 1:
            raise UserError("bert-smac needs initial, retrain_after and n_trials >= 1")
        self._space, _ = bert_space(inputs, self.name)
        self._snapper = HammingSnapper(self._space, inputs.features, inputs.rng)
        self._resources = ExitStack()
        folder = self._resources.enter_context(tempfile.TemporaryDirectory(prefix="nasbench-smac-"))
        self._resources.enter_context(quiet_logger("smac"))
        scenario = Scenario(configuration_space(self._space, int(inputs.seed)), name="nasbench-bert",
                            output_directory=Path(folder) / "smac", deterministic=True,
                            n_trials=int(self.settings.n_trials), seed=int(inputs.seed))
        facade = HyperparameterOptimizationFacade
        self._smac = facade(scenario, _smac_target, overwrite=True, logging_level=False,
                            model=single_threaded_model(scenario),
                            initial_design=RandomInitialDesign(scenario, n_configs=self.settings.initial),
                            config_selector=facade.get_config_selector(
                                scenario, retrain_after=self.settings.retrain_after))
        _order_local_search_starts(self._smac)
        self._info_of: dict = {}

    def ask(self) -> Job | None:
        from benchmarks.bert.configspace import from_configuration

        info = self._smac.ask()
        row = self._snapper.snap(from_configuration(self._space, info.config))
        if row is None:
            return None
        job = Job(row, 1)
        self._info_of[id(job)] = info
        return job

    def tell(self, job: Job, observation) -> None:
        from smac.runhistory.dataclasses import TrialValue

        loss = observation.last_val_loss
        cost = 100.0 + loss if math.isfinite(loss) else 100.0      # 100 - GLUE
        self._smac.tell(self._info_of.pop(id(job)), TrialValue(cost=cost), save=False)

    def finish(self) -> None:
        resources = getattr(self, "_resources", None)
        if resources is not None:
            resources.close()


class BertOptuna(Algorithm):
    name = "bert-optuna"
    description = "Optuna TPE over the native FlexiBERT space (define-by-run), snapped by Hamming distance (bert)"
    requires = {"optuna": "pip install 'nasbench[libs]' (in a clone: pip install -e '.[libs]')"}

    @dataclass(frozen=True)
    class Settings:
        features: str = "bert-encoding"
        startup_trials: int = 10        # TPESampler n_startup_trials
        constant_liar: bool = True      # with K > 1 workers: running trials count as bad

    def start(self, inputs: SearchInputs) -> None:
        import warnings

        import optuna

        from optimizers.snapped_evaluation import quiet_logger

        self._space, _ = bert_space(inputs, self.name)
        self._snapper = HammingSnapper(self._space, inputs.features, inputs.rng)
        self._quiet = quiet_logger("optuna")
        self._quiet.__enter__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # ExperimentalWarning for constant_liar
            sampler = optuna.samplers.TPESampler(seed=int(inputs.seed), n_startup_trials=self.settings.startup_trials,
                                                 constant_liar=bool(self.settings.constant_liar and inputs.workers > 1))
        self._study = optuna.create_study(study_name="nasbench-bert", sampler=sampler, direction="minimize")
        self._trial_of: dict = {}

    def ask(self) -> Job | None:
        from optuna.trial import TrialState

        from benchmarks.bert.configspace import from_configuration

        trial = self._study.ask()
        space = self._space
        values = {"hidden_size": trial.suggest_categorical("hidden_size", list(space.hidden_sizes)),
                  "num_encoder_layers": trial.suggest_categorical("num_encoder_layers", list(space.layer_counts))}
        for k in range(1, values["num_encoder_layers"] + 1):      # define-by-run: only the layers it has
            values[f"layer{k}_operation"] = trial.suggest_categorical(
                f"layer{k}_operation", [f"{t}:{p}" for t, p in space.operations])
            values[f"layer{k}_heads"] = trial.suggest_categorical(f"layer{k}_heads", list(space.heads))
            values[f"layer{k}_ff_dimension"] = trial.suggest_categorical(f"layer{k}_ff_dimension",
                                                                         list(space.ff_dimensions))
            values[f"layer{k}_ff_count"] = trial.suggest_categorical(f"layer{k}_ff_count", list(space.ff_counts))
        row = self._snapper.snap(from_configuration(space, values))
        if row is None:
            self._study.tell(trial, state=TrialState.FAIL)
            return None
        job = Job(row, 1)
        self._trial_of[id(job)] = trial
        return job

    def tell(self, job: Job, observation) -> None:
        loss = observation.last_val_loss
        self._study.tell(self._trial_of.pop(id(job)), float(loss) if math.isfinite(loss) else 0.0)

    def finish(self) -> None:
        quiet = getattr(self, "_quiet", None)
        if quiet is not None:
            quiet.__exit__(None, None, None)


def _smac_target(config, seed: int = 0) -> float:
    raise RuntimeError("SMAC is driven through ask/tell; its target function is never called")


def _not_called(*args, **kwargs):
    raise RuntimeError("driven through ask/tell; the objective function is never called")
