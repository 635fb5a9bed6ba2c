"""TPE (hyperopt) over the bounding box of the graph2vec features, as in the NAS-Bench-NLP release (`tpe`).

Each feature dimension is a `hp.uniform` between its minimum and maximum over all architectures. A
proposed vector is snapped to the nearest architecture by cosine distance (over all architectures,
as in the release) and trained `epochs` epochs; the objective is its validation log-perplexity at
`epochs`, or `penalty` if the run diverged (or has no finite loss there). A proposal that snaps to
an architecture trained before scores its known objective again and trains nothing, as in the
release's environment (a cached model costs no time).

The release ran `fmin(..., algo=tpe.suggest, max_queue_len=20)`: `tpe.suggest` defaults (20 random
startup trials, 24 EI candidates, gamma 0.25, prior weight 1, linear forgetting 25) and proposals
made in batches of up to 20 (`queue_len`) from the same history, the pending ones counting as
losses of +inf, then evaluated in order.

Ask/tell with K workers, as hyperopt runs parallel trials: a free worker takes the next proposal of
the queue; when the queue is empty a new one is made from every proposal so far, the pending ones
(handed to a worker, not yet told) counting as losses of +inf, which is what `tpe.suggest` gives
NEW and RUNNING docs. With one worker every proposal is told before the next is made, so this is
exactly `fmin`'s serial loop.

Two engines give the same proposals, bit for bit, for the same seed (tests/test_tpe.py checks it):
- `engine="hyperopt"` drives hyperopt itself: a `Trials` object with pending docs, `tpe.suggest` to
  enqueue, each doc marked RUNNING when handed out and DONE with its loss when told, the queue filled
  as `fmin`'s loop fills it. Its pyll graph machinery costs 0.1-0.3 s per proposal in 50-d, minutes
  per 1000-hour trial.
- `engine="fast"` (default) replays that loop and `tpe.suggest`'s arithmetic directly: the same
  random draws in the same order (per-dimension draws go in reverse lexicographic order of the labels,
  as pyll evaluates them), the Parzen estimators and log-densities vectorised across dimensions.

`max_repeats` proposals in a row that train nothing new end the trial (otherwise, with every
proposal landing on known architectures, the budget could never run out). `new_only=True` snaps
to the nearest untrained architecture instead, so that every proposal trains one (about half the
proposals, and half the time, of a 1000-hour trial).
"""
import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from scipy.special import erf

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.libraries.snapped_evaluation import SnappedEvaluator, SpaceUsedUp, quiet_logger
from optimizers.libraries.space_search import NativeSpaceSearch

EPS = 1e-12                  # hyperopt.tpe.EPS
LINEAR_FORGETTING = 25       # hyperopt.tpe.DEFAULT_LF
PRIOR_WEIGHT = 1.0           # hyperopt.tpe._default_prior_weight
SEED_BOUND = 2**31 - 1       # fmin draws each suggest call's seed as rstate.integers(2**31 - 1)


class TPE(Algorithm):
    name = "tpe"
    needs = frozenset({"graph2vec"})
    description = "hyperopt TPE over the box of 50-d graph2vec features, snapped to architectures"

    @dataclass(frozen=True)
    class Settings:
        features: str = "g2v-50d"       # our 50-d graph2vec (the paper's 50-d file is not released)
        epochs: int = 50                # epochs each architecture is trained to
        penalty: float = 10.0           # objective of a diverged architecture (log-perplexity units)
        queue_len: int = 20             # fmin max_queue_len: proposals per batch (release: 20)
        n_startup_jobs: int = 20        # tpe.suggest default: random proposals before the model
        n_ei_candidates: int = 24       # tpe.suggest default: candidates scored per proposal
        gamma: float = 0.25             # tpe.suggest default: good fraction is gamma * sqrt(n)
        max_repeats: int = 2000         # proposals in a row that train nothing new: stop
        engine: str = "fast"            # "fast" (same proposals, vectorised) or "hyperopt" (fmin)
        new_only: bool = False          # True: snap to the nearest untrained architecture instead

    def start(self, inputs: SearchInputs) -> None:
        settings = self.settings
        _check(settings)
        self._evaluate = SnappedEvaluator.for_algorithm(self, inputs)   # records vectors, proposals, losses
        low, high = self._evaluate.box()
        engine = HyperoptEngine if settings.engine == "hyperopt" else FastEngine
        self._engine = engine(low, high, settings, inputs.rng)
        self._done = False

    def ask(self) -> Job | None:
        """The next proposal that trains a new architecture; known ones are told to the engine at once."""
        if self._done:
            return None
        try:
            while True:
                index, vector = self._engine.propose()
                result = self._evaluate.propose(vector)
                if isinstance(result, Job):
                    return result
                if result is not None:
                    self._engine.resolve(index, result)
        except SpaceUsedUp:
            self._done = True
            return None

    def tell(self, job: Job, observation) -> None:
        for index, loss in self._evaluate.observe(job, observation):
            self._engine.resolve(index, loss)


# -- engine "hyperopt": hyperopt's Trials, tpe.suggest and fmin's queue ----------------------------

def labels(d: int) -> list[str]:
    """Hyperparameter labels; zero-padded so that lexicographic order is numeric order."""
    width = len(str(d - 1))
    return [f"component_{i:0{width}d}" for i in range(d)]


class HyperoptEngine:
    """Proposals from hyperopt itself, queued as `fmin(max_queue_len=queue_len)` queues them."""

    def __init__(self, low, high, settings, rstate):
        from functools import partial

        from hyperopt import Trials, base, hp, tpe

        self.names = labels(len(low))
        space = {name: hp.uniform(name, float(lo), float(hi)) for name, lo, hi in zip(self.names, low, high)}
        self.domain = base.Domain(_not_called, space)
        self.trials = Trials()
        self.algo = partial(tpe.suggest, n_startup_jobs=settings.n_startup_jobs,
                            n_EI_candidates=settings.n_ei_candidates, gamma=settings.gamma)
        self.queue_len, self.rstate = settings.queue_len, rstate
        self.docs: list = []                    # per proposal: its trial doc

    def propose(self) -> tuple[int, np.ndarray]:
        from hyperopt import base

        new = [doc for doc in self.trials._dynamic_trials if doc["state"] == base.JOB_STATE_NEW]
        if not new:
            self._enqueue()
            new = [doc for doc in self.trials._dynamic_trials if doc["state"] == base.JOB_STATE_NEW]
        doc = new[0]
        doc["state"] = base.JOB_STATE_RUNNING
        spec = base.spec_from_misc(doc["misc"])
        self.docs.append(doc)
        return len(self.docs) - 1, np.array([spec[name] for name in self.names], dtype=float)

    def resolve(self, index: int, loss: float) -> None:
        from hyperopt import base

        doc = self.docs[index]
        doc["state"] = base.JOB_STATE_DONE
        doc["result"] = {"loss": float(loss), "status": base.STATUS_OK}
        self.trials.refresh()

    def _enqueue(self) -> None:
        """fmin's loop: ask `tpe.suggest` for docs until `queue_len` are NEW."""
        from hyperopt import base

        with quiet_logger("hyperopt"):
            queued = self.trials.count_by_state_unsynced(base.JOB_STATE_NEW)
            while queued < self.queue_len:
                new_ids = self.trials.new_trial_ids(self.queue_len - queued)
                self.trials.refresh()
                docs = self.algo(new_ids, self.domain, self.trials, self.rstate.integers(SEED_BOUND))
                self.trials.insert_trial_docs(docs)
                self.trials.refresh()
                queued = self.trials.count_by_state_unsynced(base.JOB_STATE_NEW)


def _not_called(*args, **kwargs) -> float:
    raise RuntimeError("TPE is driven through ask/tell; its objective function is never called")


# -- engine "fast": fmin's serial loop and tpe.suggest without the pyll graph ---------------------

class FastEngine:
    """fmin(max_queue_len=queue_len) with tpe.suggest, without the pyll graph: when the queue is
    empty, fill it from every proposal so far (pending ones as +inf), hand it out in order."""

    def __init__(self, low, high, settings, rstate):
        self.low, self.high, self.settings, self.rstate = low, high, settings, rstate
        self.order = draw_order(len(low))
        self.vectors: list[np.ndarray] = []
        self.losses: list[float] = []           # per proposal; +inf while pending
        self.queue: deque = deque()

    def propose(self) -> tuple[int, np.ndarray]:
        if not self.queue:
            self._fill()
        vector = self.queue.popleft()
        self.vectors.append(vector)
        self.losses.append(math.inf)
        return len(self.vectors) - 1, vector

    def resolve(self, index: int, loss: float) -> None:
        self.losses[index] = float(loss)

    def _fill(self) -> None:
        settings, low, high, rstate = self.settings, self.low, self.high, self.rstate
        d, vectors, queue = len(low), self.vectors, []
        while len(queue) < settings.queue_len:
            seed = rstate.integers(SEED_BOUND)
            if len(vectors) + len(queue) < settings.n_startup_jobs:   # rand.suggest: a whole batch
                rng = np.random.default_rng(seed)
                for _ in range(settings.queue_len - len(queue)):
                    vector = np.empty(d)
                    for j in self.order:
                        vector[j] = rng.uniform(low[j], high[j], size=(1,))[0]
                    queue.append(vector)
            else:                                                       # tpe.suggest: one point
                history = np.array(vectors + queue)
                pending = self.losses + [math.inf] * len(queue)
                queue.append(suggest(history, pending, low, high, settings, np.random.default_rng(seed),
                                     self.order))
        self.queue.extend(queue)


def draw_order(d: int) -> list[int]:
    """Order in which hyperopt draws the dimensions: reverse lexicographic order of the labels."""
    names = labels(d)
    return sorted(range(d), key=names.__getitem__, reverse=True)


def suggest(history: np.ndarray, losses: list, low, high, settings, rng, order) -> np.ndarray:
    """One tpe.suggest proposal from `history` [m, d] and `losses` [m] (+inf for pending)."""
    m = len(losses)
    n_below = min(int(np.ceil(settings.gamma * np.sqrt(m))), LINEAR_FORGETTING)
    below_rows = np.zeros(m, dtype=bool)
    below_rows[np.argsort(np.asarray(losses))[:n_below]] = True
    prior_mu = 0.5 * (high + low)
    prior_sigma = 1.0 * (high - low)
    below = parzen(history[below_rows].T, prior_mu, prior_sigma)
    above = parzen(history[~below_rows].T, prior_mu, prior_sigma)
    n = settings.n_ei_candidates
    samples = np.empty((len(low), n))
    for j in order:
        samples[j] = gmm_sample(below[0][j], below[1][j], below[2][j], float(low[j]), float(high[j]), n, rng)
    score = gmm_lpdf(samples, *below, low, high) - gmm_lpdf(samples, *above, low, high)
    return samples[np.arange(len(low)), np.argmax(score, axis=1)]


def parzen(obs: np.ndarray, prior_mu, prior_sigma):
    """hyperopt.tpe.adaptive_parzen_normal for every dimension at once.

    `obs` [d, k] observed values per dimension (trial order); returns weights, mus, sigmas [d, k + 1]."""
    from hyperopt.tpe import adaptive_parzen_normal

    d, k = obs.shape
    if k < 2:        # hyperopt's special cases: per dimension
        parts = [adaptive_parzen_normal(obs[j], PRIOR_WEIGHT, prior_mu[j], prior_sigma[j]) for j in range(d)]
        return tuple(np.array([part[i] for part in parts]) for i in range(3))
    order = np.argsort(obs, axis=1)
    ranked = np.take_along_axis(obs, order, axis=1)
    prior_pos = (ranked < prior_mu[:, None]).sum(axis=1)            # np.searchsorted, side="left"
    slot = np.arange(k + 1)[None, :]
    is_prior = slot == prior_pos[:, None]
    source = np.clip(slot - (slot > prior_pos[:, None]), 0, k - 1)
    mus = np.where(is_prior, prior_mu[:, None], np.take_along_axis(ranked, source, axis=1))
    sigma = np.zeros_like(mus)
    sigma[:, 1:-1] = np.maximum(mus[:, 1:-1] - mus[:, 0:-2], mus[:, 2:] - mus[:, 1:-1])
    sigma[:, 0] = mus[:, 1] - mus[:, 0]
    sigma[:, -1] = mus[:, -1] - mus[:, -2]
    if LINEAR_FORGETTING < k:
        ramp = np.concatenate([np.linspace(1 / k, 1.0, num=k - LINEAR_FORGETTING), np.ones(LINEAR_FORGETTING)])
        weights = np.where(is_prior, PRIOR_WEIGHT, np.take_along_axis(ramp[order], source, axis=1))
    else:
        weights = np.where(is_prior, PRIOR_WEIGHT, 1.0)
    max_sigma = prior_sigma
    min_sigma = prior_sigma / min(100.0, (1.0 + (k + 1)))
    sigma = np.clip(sigma, min_sigma[:, None], max_sigma[:, None])
    sigma = np.where(is_prior, prior_sigma[:, None], sigma)
    weights = weights / weights.sum(axis=1, keepdims=True)
    return weights, mus, sigma


def gmm_sample(weights, mus, sigmas, low: float, high: float, n: int, rng) -> np.ndarray:
    """hyperopt.tpe.GMM1 with bounds: `n` draws by rejection, one component at a time."""
    samples = []
    multinomial, normal = rng.multinomial, rng.normal
    mus, sigmas = mus.tolist(), sigmas.tolist()
    while len(samples) < n:
        active = multinomial(1, weights).argmax()
        draw = normal(mus[active], sigmas[active])
        if low <= draw < high:
            samples.append(draw)
    return np.asarray(samples)


def _normal_cdf(x, mu, sigma):
    z = (x - mu) / np.maximum(np.sqrt(2) * sigma, EPS)
    return 0.5 * (1 + erf(z))


def gmm_lpdf(samples, weights, mus, sigmas, low, high) -> np.ndarray:
    """hyperopt.tpe.GMM1_lpdf (bounded, unquantised) for every dimension: [d, n] log-densities.

    The same operations in the same order as hyperopt's, in place on one [d, n, components] buffer."""
    low, high = low[:, None], high[:, None]
    p_accept = np.sum(weights * (_normal_cdf(high, mus, sigmas) - _normal_cdf(low, mus, sigmas)), axis=1)
    z = np.sqrt(2 * np.pi * sigmas**2)
    log_coef = np.log(weights / z / p_accept[:, None])
    x = np.subtract(samples[:, :, None], mus[:, None, :])        # dist
    x /= np.maximum(sigmas, EPS)[:, None, :]
    np.square(x, out=x)                                          # mahal
    x *= -0.5
    x += log_coef[:, None, :]
    top = x.max(axis=2)                                          # logsum_rows
    x -= top[:, :, None]
    np.exp(x, out=x)
    return np.log(x.sum(axis=2)) + top


def _check(settings) -> None:
    if settings.queue_len < 1 or settings.max_repeats < 1 or settings.n_ei_candidates < 1:
        raise UserError("tpe needs queue_len, n_ei_candidates and max_repeats >= 1")
    if settings.engine not in ("fast", "hyperopt"):
        raise UserError(f"tpe engine must be 'fast' or 'hyperopt', got '{settings.engine}'")


class SpaceTPE(NativeSpaceSearch):
    """`tpe` in a benchmark's native space: hyperopt's TPE over its conditional choices, each proposal
    snapped to the nearest untrained evaluated architecture (the library is told that one's result)."""
    name = "tpe"
    description = "hyperopt TPE over the native space, proposals snapped by the space's distance"

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"       # the space's own encoding (snapping)
        n_startup_jobs: int = 10        # random proposals before the model (tpe.suggest default: 20)
        n_ei_candidates: int = 24       # tpe.suggest default
        gamma: float = 0.25             # tpe.suggest default

    def _begin(self, inputs: SearchInputs) -> None:
        from functools import partial

        from hyperopt import Trials, base, tpe

        from benchmarks.core.space import hyperopt_space

        self._hp_space = hyperopt_space(self._space.choices())
        self._domain = base.Domain(_not_called, self._hp_space)
        self._trials = Trials()
        self._suggest = partial(tpe.suggest, n_startup_jobs=self.settings.n_startup_jobs,
                                n_EI_candidates=self.settings.n_ei_candidates, gamma=self.settings.gamma)
        self._rng = inputs.rng

    def _propose(self):
        from hyperopt import base, space_eval

        from benchmarks.core.space import flatten_hyperopt

        with quiet_logger("hyperopt"):
            new_id = self._trials.new_trial_ids(1)
            self._trials.refresh()
            docs = self._suggest(new_id, self._domain, self._trials, int(self._rng.integers(2**31 - 1)))
        doc = docs[0]
        doc["state"] = base.JOB_STATE_RUNNING
        self._trials.insert_trial_docs(docs)
        self._trials.refresh()
        values = flatten_hyperopt(space_eval(self._hp_space, base.spec_from_misc(doc["misc"])))
        return doc["tid"], self._space.from_values(values)

    def _report(self, tid, loss: float) -> None:
        from hyperopt import base

        for doc in self._trials._dynamic_trials:
            if doc["tid"] == tid:
                doc["state"] = base.JOB_STATE_DONE
                doc["result"] = {"loss": float(loss) if math.isfinite(loss) else 0.0, "status": base.STATUS_OK}
        self._trials.refresh()
