"""DPL: deep power laws for freeze-thaw search (Kadra et al., "Scaling Laws for Hyperparameter
Optimization", NeurIPS 2023), written from the paper.

The model: an ensemble of `ensemble` small networks; each maps an architecture's features x (its
space's encoding, or graph2vec features: setting `features`) to the three parameters of a power law in
the budget, f(x, t) = alpha(x) + beta(x) * t^(-gamma(x)), with t = epochs / max_epochs in (0, 1] and
gamma >= 0 (softplus). Each network is trained with Adam on the L1 loss over every (architecture, epoch,
validation loss) the trial has paid for: `fit_steps` steps from scratch once `initial` architectures have
a result, then `refit_steps` warm-started steps every `refit_every` new results; networks differ by
their seed (torch.manual_seed(trial seed * 1000 + member)).

The search (freeze-thaw): the first `initial` architectures are drawn at random and trained one epoch
each. Then each free worker takes the architecture with the highest expected improvement at the full
budget, EI(x) = E[max(best - f(x, 1), 0)] under a normal with the ensemble's mean and spread, over the
architectures not finished, not running and not diverged (an unseen architecture is a candidate too:
its curve is predicted from its features alone), and trains it `step_epochs` more epochs from its
checkpoint. `best` is the lowest validation loss paid for so far. Scores are standardised per trial.

Cost: the model is refit as results arrive, so DPL costs far more CPU per trial than ASHA (measured in
docs/reference/algorithms.md#what-a-trial-costs). Needs torch (`pip install -e '.[proxies]'`).
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs


class DeepPowerLaw(Algorithm):
    full_fidelity_setting = "max_epochs"
    name = "dpl"
    description = ("DPL (Kadra et al. 2023): an ensemble of networks predicting power-law learning curves, "
                   "freeze-thaw by expected improvement at the full budget, one epoch a step")
    needs = frozenset({"epochs", "encoding"})
    requires = {"torch": "pip install -e '.[proxies]' (CPU torch 2.13.0)"}
    SHARED_MIN_ROWS = 64    # candidate sets from this size up read the predictions made once per fit

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"      # feature kind the networks read: the space's encoding, or g2v-10d etc.
        ensemble: int = 5               # networks in the ensemble (their spread is the uncertainty)
        hidden: int = 64                # units of each of the two hidden layers
        initial: int = 4                # random architectures trained one epoch before the model is used
        step_epochs: int = 1            # epochs a chosen architecture is trained further per step
        fit_steps: int = 500            # full-batch Adam steps of the first fit
        refit_steps: int = 20           # warm-started Adam steps per refit
        refit_every: int = 5            # new results between refits
        learning_rate: float = 1e-2     # (the paper: 250 minibatch epochs at 1e-3; full batch here: fewer, larger steps)
        max_epochs: int = 50            # the full budget (the benchmark's: make_algorithm sets it)

        def __post_init__(self):
            if self.ensemble < 1 or self.hidden < 1 or self.initial < 1 or self.step_epochs < 1 or self.fit_steps < 1 \
                    or self.refit_steps < 0 or self.refit_every < 1 or not self.learning_rate > 0 or self.max_epochs < 2:
                raise UserError("dpl needs ensemble, hidden, initial, step_epochs, fit_steps, refit_every >= 1, "
                                "refit_steps >= 0, learning_rate > 0 and max_epochs >= 2")

    def start(self, inputs: SearchInputs) -> None:
        import torch

        if inputs.features is None:
            raise UserError("dpl needs features (setting 'features')")
        x = np.asarray(inputs.features, dtype=np.float64)
        low, high = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
        x = np.nan_to_num((x - low) / np.where(high > low, high - low, 1.0))
        self._x = torch.tensor(x, dtype=torch.float32)
        self._rng, self._seed = inputs.rng, int(inputs.seed)
        self._order = iter(inputs.rng.permutation(inputs.search.n).tolist())
        self._trained = np.zeros(inputs.search.n, dtype=np.int64)      # epochs paid for, per row
        self._top = np.full(inputs.search.n, self.settings.max_epochs)  # a short log shows when it stops early
        self._done = np.zeros(inputs.search.n, dtype=bool)              # finished, diverged or stopped early
        self._running: set = set()
        self._data: list = []                                           # (row, epoch, validation loss)
        self._started = 0
        self._nets, self._fitted_at, self._best = None, 0, math.inf
        self._every_row = None                                          # (mean, std) of every row, this fit

    # -- the model ------------------------------------------------------------------------------------
    def _network(self, member: int):
        import torch

        torch.manual_seed(self._seed * 1000 + member)
        d, h = self._x.shape[1], self.settings.hidden
        return torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.LeakyReLU(), torch.nn.Linear(h, h),
                                   torch.nn.LeakyReLU(), torch.nn.Linear(h, 3))

    @staticmethod
    def _curve(params, t):
        import torch

        alpha, beta, gamma = params[:, 0], params[:, 1], torch.nn.functional.softplus(params[:, 2])
        return alpha + beta * torch.pow(t, -gamma)

    def _fit(self) -> None:
        import torch

        s = self.settings
        torch.set_num_threads(1)            # the same arithmetic whatever the machine's core count
        rows = torch.tensor([r for r, _, _ in self._data])
        t = torch.tensor([e / s.max_epochs for _, e, _ in self._data], dtype=torch.float32)
        y = np.array([v for _, _, v in self._data])
        self._mean, self._std = float(y.mean()), float(y.std()) or 1.0
        target = torch.tensor((y - self._mean) / self._std, dtype=torch.float32)
        first = self._nets is None
        if first:
            self._nets = [self._network(m) for m in range(s.ensemble)]
            self._optimisers = [torch.optim.Adam(net.parameters(), lr=s.learning_rate) for net in self._nets]
        steps = s.fit_steps if first else s.refit_steps
        x = self._x[rows]                   # gathered once per fit, not once per step: the same values
        with torch.enable_grad():
            for net, optimiser in zip(self._nets, self._optimisers):
                for _ in range(steps):
                    optimiser.zero_grad()
                    loss = (self._curve(net(x), t) - target).abs().mean()
                    loss.backward()
                    optimiser.step()
        self._fitted_at = len(self._data)
        self._every_row = None              # forget the predictions of the networks as they were before this fit

    def predict_final(self, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """(mean, std) of the ensemble's predicted validation loss at the full budget (standardised units
        undone), for `rows` (default: every row).

        The networks change only when refit, so every row's prediction is computed once per fit and the
        asks until the next fit read theirs from it, from `SHARED_MIN_ROWS` rows up. On the AMD EPYC where
        this was made these are the candidates' own batch's numbers bit for bit (the matrix product sums
        each row alike whatever the batch's size above its small-matrix path, taken for 1 to 3 rows); on
        an Intel Xeon with AVX-512 the product works in blocks of six rows and a batch's last rows take
        another kernel, so a prediction can differ from its own batch's in the last float32 bits (a few
        units in the last place; tests/test_dpl.py bounds it) and a trial there can take other steps than
        it did before this sharing. Smaller sets are computed on their own, as they always were."""
        if rows is None or len(rows) < self.SHARED_MIN_ROWS:
            return self._predict(rows)
        if self._every_row is None:
            self._every_row = self._predict(None)
        mean, std = self._every_row
        return mean[rows], std[rows]

    def _predict(self, rows) -> tuple[np.ndarray, np.ndarray]:
        import torch

        x = self._x if rows is None else self._x[torch.as_tensor(rows)]
        with torch.no_grad():
            preds = torch.stack([self._curve(net(x), torch.ones(len(x))) for net in self._nets])
        preds = preds.numpy().astype(np.float64) * self._std + self._mean
        return preds.mean(axis=0), preds.std(axis=0)

    # -- ask / tell -----------------------------------------------------------------------------------
    def ask(self) -> Job | None:
        s = self.settings
        if self._started < s.initial or not self._data:
            row = next(self._order, None)
            if row is None:
                return None
            self._started += 1
            self._running.add(row)
            return Job(row, min(s.step_epochs, int(self._top[row])) or 1)
        if self._nets is None or len(self._data) - self._fitted_at >= s.refit_every:
            self._fit()
        candidates = np.flatnonzero(~self._done & (self._trained < self._top))
        if self._running:
            candidates = candidates[~np.isin(candidates, np.fromiter(self._running, dtype=np.int64))]
        if not len(candidates):
            return None
        mean, std = self.predict_final(candidates)
        from scipy.special import ndtr

        std = np.maximum(std, 1e-9)
        z = (self._best - mean) / std
        ei = (self._best - mean) * ndtr(z) + std * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        row = int(candidates[int(np.argmax(ei))])
        if self._trained[row] == 0:
            self._started += 1
        self._running.add(row)
        return Job(row, int(min(self._trained[row] + s.step_epochs, self._top[row])))

    def tell(self, job: Job, observation) -> None:
        row = job.arch
        self._running.discard(row)
        start = observation.from_epoch
        for k, value in enumerate(observation.val_loss, start=start + 1):
            value = float(value)
            if math.isfinite(value):
                self._data.append((row, k, value))
                self._best = min(self._best, value)
        self._trained[row] = observation.epochs
        if observation.status != "OK" or observation.epochs >= self._top[row] or observation.epochs < job.epochs:
            self._done[row] = True
