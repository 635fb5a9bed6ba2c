"""MOBSTER and Hyper-Tune: asynchronous successive halving whose new architectures are chosen by
Gaussian-process models of the rungs, written from the papers (syne-tune 0.16 no longer ships them:
its Gaussian-process searchers were removed in 0.14).

Both keep ASHA's promotions (`asha.py`: promotion type, rungs 1, 3, 9, 27, R epochs, eta 3) and change
only which architecture a free worker starts when nothing is promotable:

- **MOBSTER** (Klein et al., "Model-based Asynchronous Hyperparameter and Neural Architecture Search",
  2020; here its independent-GP variant, syne-tune's `model="gp_independent"`): one GP per rung level,
  over the architecture's features (the space's encoding, scaled to [0, 1]) to its validation loss at
  that rung. A level is *supported* once it holds `min_points` results. The new architecture is the
  candidate with the highest expected improvement under the GP of the highest level with
  `decide_points` results (by default the features' dimension, syne-tune's rule after BOHB; the lowest
  supported level while none has that many).
- **Hyper-Tune** (Li et al., "Hyper-Tune: Towards Efficient Hyper-parameter Tuning at Scale", VLDB
  2022), in asynchronous Hyperband (`brackets` = 4, as `ahb`): the GPs of every supported level form an
  ensemble, weighted by theta_r = the share of `samples` posterior draws in which level r's GP has the
  lowest ranking loss (the fraction of pairs it orders wrongly) on the results of the highest supported
  level (that level itself by `folds`-fold cross-validation), ties counted for each tied level, weights
  under 0.01 dropped. The ensemble predicts mean sum theta_r mu_r and variance sum theta_r^2 sigma_r^2;
  the new architecture has the highest expected improvement under it. Its bracket is drawn with
  probability proportional to theta_b / r_b over the supported brackets (scaled to the mass the default
  distribution gives them; the default, syne-tune's, on the rest), as syne-tune does.

The GPs: a constant times a Matern-5/2 kernel (one length scale) plus white noise, hyperparameters by
maximum marginal likelihood (scikit-learn, L-BFGS from the previous fit), refit every `refit_every`
new results of a level and otherwise conditioned on the new data with the same hyperparameters. Each
level's losses are standardised (a z-score per level), so that levels whose losses differ in scale mix
as rankings. A level keeps at most `max_points` results: its best quarter and the latest others
(syne-tune keeps its best and random others). Expected improvement is against the lowest predicted
mean among the architectures observed at the level that decides (MOBSTER's level; Hyper-Tune's highest
supported level). Until the first rung is supported, new architectures are the trial's random
permutation, as in ASHA; the candidates of a decision are `pool` architectures not yet started, drawn
at random. Diverged runs (non-finite losses) are left out of the models. Seeded by the trial; the
harness runs trials with one BLAS thread (a test running one in its own process should too).
"""
import math
import warnings
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs
from optimizers.multi_fidelity.asha import ASHA, bracket_probabilities, rung_levels


class _LevelModel:
    """A GP of one rung level: scaled features -> z-scored validation loss; hyperparameters kept between refits."""

    def __init__(self):
        self.kernel = None          # fitted kernel (hyperparameters) of the last refit
        self.fitted_with = 0        # results the level had at that refit
        self.key = None             # (results) the current posterior was conditioned on
        self.gp = None
        self.rows = None            # the rows in the posterior, and their z-scores
        self.z = None

    def condition(self, x: np.ndarray, rows: np.ndarray, losses: np.ndarray, count: int, refit_every: int,
                  seed: int) -> None:
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        if self.key == count:
            return
        z = (losses - losses.mean()) / (losses.std() or 1.0)
        refit = self.kernel is None or count - self.fitted_with >= refit_every
        kernel = self.kernel if self.kernel is not None else (
            ConstantKernel(1.0, (1e-2, 1e2)) * Matern(1.0, (1e-2, 1e2), nu=2.5) + WhiteKernel(1e-2, (1e-6, 1.0)))
        gp = GaussianProcessRegressor(kernel, optimizer="fmin_l_bfgs_b" if refit else None, random_state=seed)
        with warnings.catch_warnings():         # a length scale at its bound is a fit, not a user's problem
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(x[rows], z)
        if refit:
            self.kernel, self.fitted_with = gp.kernel_, count
        self.gp, self.rows, self.z, self.key = gp, rows, z, count

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean, std = self.gp.predict(x, return_std=True)
        return mean, std

    def conditioned_on(self, x: np.ndarray, z: np.ndarray):
        """A GP with this level's hyperparameters conditioned on other data (cross-validation folds)."""
        from sklearn.gaussian_process import GaussianProcessRegressor

        return GaussianProcessRegressor(self.kernel, optimizer=None).fit(x, z)


def ranking_loss(samples: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per posterior draw (columns of `samples`, [n, S]), the share of the n(n-1)/2 pairs of `targets` it
    orders differently (Hyper-Tune's ranking loss)."""
    n = len(targets)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    truth = (targets[:, None] < targets[None, :])[upper]                      # [pairs]
    drawn = (samples[:, None, :] < samples[None, :, :])[upper]                # [pairs, S]
    return (drawn != truth[:, None]).mean(axis=0)


def ensemble_weights(losses: np.ndarray) -> np.ndarray:
    """theta over levels from ranking losses [levels, S]: the share of draws in which a level is lowest (ties
    count for each), normalised, weights under 0.01 dropped and the rest renormalised."""
    wins = (losses == losses.min(axis=0, keepdims=True)).sum(axis=1).astype(float)
    theta = wins / wins.sum()
    theta[theta <= 0.01] = 0.0
    return theta / theta.sum()


def expected_improvement(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """EI of a loss below `best` for Gaussian predictions (`std` 0 gives max(best - mean, 0))."""
    from scipy.stats import norm

    std = np.maximum(std, 1e-12)
    u = (best - mean) / std
    return (best - mean) * norm.cdf(u) + std * norm.pdf(u)


class MOBSTER(ASHA):
    name = "mobster"
    needs = frozenset({"epochs", "encoding"})
    description = ("MOBSTER (Klein et al. 2020), independent GPs per rung: ASHA whose new architectures have the "
                   "highest EI under the GP of the highest rung with enough results")

    @dataclass(frozen=True)
    class Settings(ASHA.Settings):
        features: str = "encoding"   # feature kind the GPs read: the space's encoding, or g2v-10d etc.
        min_points: int = 6          # results a rung level needs before its GP is used (syne-tune: 6)
        pool: int = 500              # architectures not yet started, drawn as candidates at each decision
        max_points: int = 256        # results per level a GP is conditioned on, at most
        refit_every: int = 10        # new results of a level between hyperparameter refits
        decide_points: int = 0       # MOBSTER: results the deciding level needs (0: the features' dimension)

        def __post_init__(self):
            super().__post_init__()
            if min(self.pool, self.refit_every) < 1 or self.min_points < 3 or self.max_points < self.min_points \
                    or self.decide_points < 0:
                raise UserError("mobster and hypertune need min_points >= 3, max_points >= min_points, pool >= 1, "
                                "refit_every >= 1 and decide_points >= 0")

    def start(self, inputs: SearchInputs) -> None:
        super().start(inputs)
        if inputs.features is None:
            raise UserError(f"{self.name} needs features (setting 'features')")
        x = np.asarray(inputs.features, dtype=np.float64)
        low, high = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
        self._x = np.nan_to_num((x - low) / np.where(high > low, high - low, 1.0))
        self._levels = rung_levels(self.settings.grace_epochs, self.settings.eta, self.settings.max_epochs)
        self._models = {level: _LevelModel() for level in self._levels}
        self._started = np.zeros(inputs.search.n, dtype=bool)
        self._seed = int(inputs.seed)
        self.choices: list = []      # (row, level that decided, EI) of every model-based choice (tests)

    # -- data --------------------------------------------------------------------------------------
    def _level_data(self, level: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(rows, losses, count) of the finite results at `level` over every bracket: at most `max_points`,
        the best quarter and the latest others; count = all finite results there."""
        keys = [key for rungs in self._brackets for rung in rungs if rung.epochs == level
                for key in rung.ranked if key[0] < math.inf]
        count, cap = len(keys), self.settings.max_points
        if count > cap:
            keys.sort()                                            # by loss
            best, rest = keys[:cap // 4], sorted(keys[cap // 4:], key=lambda k: k[1])   # rest by arrival
            keys = best + rest[len(rest) - (cap - len(best)):]
        keys.sort(key=lambda k: k[1])                              # arrival order: the same in every process
        return np.array([k[2] for k in keys], dtype=np.int64), np.array([k[0] for k in keys]), count

    def _supported(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """[(level, rows, losses)] of the lowest levels with `min_points` results each, conditioned."""
        supported = []
        for level in self._levels:
            rows, losses, count = self._level_data(level)
            if count < self.settings.min_points:
                break
            self._models[level].condition(self._x, rows, losses, count, self.settings.refit_every, self._seed)
            supported.append((level, rows, losses))
        return supported

    # -- decisions ---------------------------------------------------------------------------------
    def _new_row(self) -> int | None:
        supported = self._supported()
        if not supported:
            row = next((r for r in self._order if not self._started[r]), None)
        else:
            unstarted = np.flatnonzero(~self._started)
            if not len(unstarted):
                return None
            candidates = unstarted if len(unstarted) <= self.settings.pool else \
                np.sort(self._rng.choice(unstarted, self.settings.pool, replace=False))
            mean, std, best, level = self._predict(supported, self._x[candidates])
            ei = expected_improvement(mean, std, best)
            k = int(np.argmax(ei))
            row = int(candidates[k])
            self.choices.append((row, level, float(ei[k])))
        if row is not None:
            self._started[row] = True
        return row

    def _predict(self, supported, x):
        """(mean, std, best, deciding level) of the candidates `x` under the model that decides: the highest
        level with `decide_points` results (the features' dimension by default: syne-tune's rule for
        MOBSTER's acquisition level, taken from BOHB), else the lowest."""
        need = max(self.settings.decide_points or self._x.shape[1], self.settings.min_points)
        level, rows, _ = next((entry for entry in reversed(supported) if self._models[entry[0]].key >= need),
                              supported[0])
        model = self._models[level]
        mean, std = model.predict(x)
        return mean, std, float(model.predict(self._x[rows])[0].min()), level


class HyperTune(MOBSTER):
    name = "hypertune"
    description = ("Hyper-Tune (Li et al. 2022): asynchronous Hyperband whose new architectures have the highest EI "
                   "under an ensemble of per-rung GPs weighted by ranking loss, brackets drawn by the same weights")

    @dataclass(frozen=True)
    class Settings(MOBSTER.Settings):
        brackets: int = 4            # asynchronous Hyperband's brackets (as ahb)
        samples: int = 50            # posterior draws per level for the ranking losses (syne-tune: 50)
        folds: int = 5               # cross-validation folds of the highest supported level, at most

        def __post_init__(self):
            super().__post_init__()
            if self.samples < 1 or self.folds < 2:
                raise UserError("hypertune needs samples >= 1 and folds >= 2")

    def start(self, inputs: SearchInputs) -> None:
        super().start(inputs)
        self._theta_key, self._theta = None, np.ones(1)
        self.weights: list = []      # (new architectures so far, theta) at every change of theta (tests, docs)

    def _weights(self, supported) -> np.ndarray:
        """theta over the supported levels, recomputed when the highest supported level's data changes."""
        if len(supported) < 2:
            return np.ones(1)
        top, rows, _ = supported[-1]
        key = (len(supported), self._models[top].key)
        if key == self._theta_key:
            return self._theta
        rng = np.random.default_rng([self._seed, len(supported), self._models[top].key])
        s = self.settings
        x, z = self._x[rows], self._models[top].z
        losses = np.zeros((len(supported), s.samples))
        for i, (level, _, _) in enumerate(supported[:-1]):
            draws = self._models[level].gp.sample_y(x, s.samples, random_state=int(rng.integers(2**31)))
            losses[i] = ranking_loss(draws, z)
        folds = min(len(rows) // 2, s.folds)
        for test in np.array_split(np.arange(len(rows)), folds):
            train = np.setdiff1d(np.arange(len(rows)), test)
            gp = self._models[top].conditioned_on(x[train], z[train])
            draws = gp.sample_y(x[test], s.samples, random_state=int(rng.integers(2**31)))
            losses[-1] += ranking_loss(draws, z[test]) / folds
        self._theta_key, self._theta = key, ensemble_weights(losses)
        self.weights.append((int(self._started.sum()), self._theta.tolist()))
        return self._theta

    def _predict(self, supported, x):
        theta = self._weights(supported)
        mean, var = np.zeros(len(x)), np.zeros(len(x))
        top_rows = supported[len(theta) - 1][1]
        observed_mean = np.zeros(len(top_rows))
        for weight, (level, _, _) in zip(theta, supported):
            if weight > 0:
                m, sd = self._models[level].predict(x)
                mean += weight * m
                var += weight ** 2 * sd ** 2
                observed_mean += weight * self._models[level].predict(self._x[top_rows])[0]
        return mean, np.sqrt(var), float(observed_mean.min()), supported[len(theta) - 1][0]

    def _new_bracket(self) -> int:
        """Hyper-Tune's bracket draw: theta_b / r_b over the supported brackets, syne-tune's default on the rest."""
        default = bracket_probabilities(self._levels, len(self._brackets)) if len(self._brackets) > 1 else np.ones(1)
        if len(self._theta) < 2 or len(self._brackets) < 2:
            p = default
        else:
            head = min(len(self._theta), len(self._brackets))
            w = self._theta[:head] / np.array(self._levels[:head], dtype=float)
            p = default.copy()
            p[:head] = w / w.sum() * default[:head].sum() if w.sum() > 0 else default[:head]
        return int(self._rng.choice(len(self._brackets), p=p / p.sum()))
