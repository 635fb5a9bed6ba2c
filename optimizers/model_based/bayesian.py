"""Bayesian optimisation with a bagged XGBoost surrogate and a lower confidence bound, as in the
NAS-Bench-NLP release (`bo10d`, `bo50d`).

The search is over every architecture not yet trained. The first `initial` architectures are drawn
at random (without replacement). Then, after `initial` evaluations and every `refit_every` ones
after that, the surrogate is refit: `bags` XGBoost regressors (`n_estimators` trees of depth
`max_depth`, the XGBRegressor defaults otherwise), each on a bootstrap sample of `bag_fraction` of
the observations (drawn with replacement, as sklearn's BaggingRegressor does in the release), predict
the validation log-perplexity at `epochs` epochs from the feature vector. Candidates are ranked by
the lower confidence bound `mean - beta * std` (mean and population std across the bags); the best
untried one is trained, and until the next refit the next ones down the same ranking. Ties in the
bound are broken by a random order of the rows drawn once per trial (the release broke them by the
order of its log folder listing).

Observations: as in the release, an architecture whose run diverged (status not 'OK', or no finite
validation loss at `epochs`) is never trained again but is left out of the surrogate's data.

With K workers: an architecture counts as tried when it is handed to a worker, so pending ones are
never candidates; the refit schedule counts architectures handed out, and each refit learns from
the results told so far. No constant liar: between refits the algorithm hands out the next rows of one
LCB ranking, so up to `refit_every` pending jobs are already distinct, diverse picks from one fit, and
a lie about a pending row would only change predictions for rows that are excluded anyway. With one
worker, handed out = told at every ask, and the algorithm is exactly the sequential one.

Speed (see `scripts/bench_model_optimizers.py`): the trees are grown with the exact greedy method on
one thread (what xgboost's 'auto' chose for data this small in the release's era, and 2-3x faster
than 'hist' here), each bag on its distinct rows with the bootstrap counts as weights (equivalent to
duplicated rows), the ensemble predicts only untried rows, each bag once per refit.
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs


class BayesianOptimisation(Algorithm):
    """Bagged-XGBoost BO with a lower-confidence-bound acquisition over all untried architectures."""
    name = "bo"
    description = "Bayesian optimisation, bagged XGBoost + LCB over graph2vec features"
    needs = frozenset({"graph2vec"})

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # feature kind the surrogate reads
        initial: int = 20               # random architectures before the first model
        epochs: int = 50                # epochs each architecture is trained to (the target's epoch)
        bags: int = 14                  # bagged regressors; their spread is the std
        bag_fraction: float = 0.5       # sample size of each bag, as a fraction of the observations
        bootstrap: bool = True          # bags drawn with replacement (sklearn BaggingRegressor default)
        n_estimators: int = 100         # boosting rounds of each XGBRegressor
        max_depth: int = 15             # depth of each tree
        beta: float = 2.0               # LCB = mean - beta * std
        refit_every: int = 10           # evaluations between surrogate refits
        tree_method: str = "exact"      # xgboost tree method ('exact', 'hist', 'approx')

    def start(self, inputs: SearchInputs) -> None:
        import xgboost  # noqa: F401  (heavy: imported when a trial runs)

        settings = self.settings
        rng = inputs.rng
        n = inputs.search.n
        _check(settings, inputs.features, n)
        self._n, self._rng = n, rng
        self._features = np.ascontiguousarray(inputs.features, dtype=np.float32)
        self._epochs = int(settings.epochs)
        self._tried = np.zeros(n, dtype=bool)    # handed to a worker
        self._handed_out = 0
        self._rows: list[int] = []                # architectures with a finite target, in order told
        self._targets: list[float] = []
        self._initial = rng.choice(n, size=min(int(settings.initial), n), replace=False).tolist()
        self._tie_rank = rng.permutation(n)
        self._ranking = np.empty(0, dtype=np.int64)
        self._position = 0
        # Kept for inspection (tests): the rows told in order, and each refit's
        # (architectures handed out before it, training rows, training targets, ranking of untried rows).
        self.evaluated, self.refits = [], []

    def ask(self) -> Job | None:
        done = self._handed_out
        if done < len(self._initial):
            row = self._initial[done]
        elif done >= self._n:
            return None
        else:
            if (done - len(self._initial)) % self.settings.refit_every == 0 or self._position >= len(self._ranking):
                candidates = np.flatnonzero(~self._tried)
                self._ranking = self._rank(self._features, self._rows, self._targets, candidates, self._tie_rank,
                                           self._rng)
                self.refits.append((done, list(self._rows), list(self._targets), self._ranking))
                self._position = 0
            row = int(self._ranking[self._position])
            self._position += 1
        self._tried[row] = True
        self._handed_out += 1
        return Job(row, self._epochs)

    def tell(self, job: Job, observation) -> None:
        self.evaluated.append(job.arch)
        loss = observation.last_val_loss
        if observation.status == "OK" and observation.epochs == self._epochs and math.isfinite(loss):
            self._rows.append(job.arch)
            self._targets.append(loss)

    def _rank(self, features, rows, targets, candidates, tie_rank, rng) -> np.ndarray:
        """Untried `candidates` ordered best first by the LCB of a freshly fitted bagged surrogate."""
        if len(targets) < 2:      # nothing to learn from yet: a random order
            return candidates[np.argsort(tie_rank[candidates], kind="stable")]
        boosters = fit_bags(features[rows], np.asarray(targets), self.settings, rng)
        mean, std = predict_bags(boosters, features[candidates])
        scores = mean - self.settings.beta * std
        return candidates[np.lexsort((tie_rank[candidates], scores))]


def xgb_params(settings, seed: int) -> dict:
    """Booster parameters equal to `XGBRegressor(n_estimators, max_depth)` defaults, one thread."""
    return {"objective": "reg:squarederror", "max_depth": int(settings.max_depth),
            "tree_method": settings.tree_method, "nthread": 1, "seed": int(seed), "verbosity": 0}


def fit_bags(x: np.ndarray, y: np.ndarray, settings, rng: np.random.Generator) -> list:
    """`settings.bags` boosters, each fit on a (bootstrap) sample of `bag_fraction` of (x, y)."""
    import xgboost

    n = len(y)
    size = max(1, int(settings.bag_fraction * n))
    boosters = []
    for _ in range(settings.bags):
        if settings.bootstrap:
            counts = np.bincount(rng.integers(0, n, size=size), minlength=n)
        else:
            counts = np.zeros(n, dtype=np.int64)
            counts[rng.choice(n, size=size, replace=False)] = 1
        seed = int(rng.integers(2**31 - 1))
        keep = np.flatnonzero(counts)
        data = xgboost.DMatrix(x[keep], label=y[keep], weight=counts[keep].astype(np.float32), nthread=1)
        booster = xgboost.Booster(xgb_params(settings, seed), [data])
        boost_rounds(booster, data, settings.n_estimators)
        boosters.append(booster)
    return boosters


def boost_rounds(booster, data, rounds: int) -> None:
    """What `xgboost.train` does, minus its callbacks: `rounds` boosting rounds on `data`. The first
    round goes through `Booster.update` (it checks `data` and records its feature names); the others
    call the library's one-round update directly, skipping the Python checks of the same matrix
    again (about a tenth of bo's compute time on PTB)."""
    import ctypes

    from xgboost.core import _LIB, _check_call

    for iteration in range(rounds):
        if iteration == 0:
            booster.update(data, iteration)
        else:
            _check_call(_LIB.XGBoosterUpdateOneIter(booster.handle, ctypes.c_int(iteration), data.handle))


def predict_bags(boosters: list, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population std [len(x)] of the boosters' predictions (log-perplexity)."""
    predictions = np.empty((len(boosters), len(x)))
    for k, booster in enumerate(boosters):
        predictions[k] = booster.inplace_predict(x)
    return predictions.mean(axis=0), predictions.std(axis=0)


def _check(settings, features, n: int) -> None:
    if features is None or features.shape[0] != n:
        raise UserError("bo needs a feature matrix with one row per architecture (setting 'features')")
    if settings.initial < 0 or settings.refit_every < 1 or settings.bags < 1 or not 0 < settings.bag_fraction <= 1:
        raise UserError("bo needs initial >= 0, refit_every >= 1, bags >= 1 and 0 < bag_fraction <= 1")
    if settings.tree_method not in ("exact", "hist", "approx"):
        raise UserError(f"bo tree_method must be exact, hist or approx, got '{settings.tree_method}'")


class BO10d(BayesianOptimisation):
    name = "bo10d"
    description = "Bayesian optimisation, bagged XGBoost + LCB over 10-d graph2vec features"

    @dataclass(frozen=True)
    class Settings(BayesianOptimisation.Settings):
        features: str = "shipped-10d"   # the paper's 10-d graph2vec features (the shipped file)


class BO50d(BayesianOptimisation):
    name = "bo50d"
    description = "Bayesian optimisation, bagged XGBoost + LCB over 50-d graph2vec features"

    @dataclass(frozen=True)
    class Settings(BayesianOptimisation.Settings):
        features: str = "g2v-50d"       # our 50-d graph2vec (the paper's 50-d file is not released)


class SpaceBO(BayesianOptimisation):
    """`bo` on a benchmark without graph2vec features: the same model over the space's own encoding,
    sized for ~50 evaluations (10 random, refit after every evaluation)."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    needs = frozenset({"encoding"})

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"      # the space's own encoding
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
