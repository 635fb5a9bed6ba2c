"""DyHPO: dynamic multi-fidelity search with a deep-kernel Gaussian process (Wistuba, Kadra and Grabocka,
"Supervising the Multi-Fidelity Race of Hyperparameter Configurations", NeurIPS 2022), written from the
paper (syne-tune 0.16 no longer ships it).

The surrogate: a Gaussian process over learned features. A network phi maps (the architecture's
features x scaled to [0, 1], the budget t = epochs / max_epochs, the learning curve before that epoch)
to a `embedding`-dimensional vector; the curve goes through a 1-D convolution (`channels` filters of
width 3 over the validation losses so far, zero-padded to max_epochs, max-pooled) as in the paper, and
is concatenated with x, t and the curve's last value (ours: max-pooling keeps no position, and the last
value predicts the next far better than the pooled filters alone) before two fully connected layers of
`hidden` units. The GP's prior mean is that last value (0, the standardised mean, for a new
architecture): it models the change from the last result (ours; with a zero mean its next-epoch error
on held-out WikiText-2 curves was three times that of the last value itself). The kernel is a scaled
squared exponential on phi's output; network and kernel (length scale, output scale, noise) are trained
together by maximising the exact marginal likelihood with Adam: `fit_steps` steps once `initial`
architectures have one epoch, then `refit_steps` warm-started steps every `refit_every` new results.

The search: each free worker takes the candidate with the highest multi-fidelity expected improvement
at its next budget, EI(x, b+1) = E[max(best(b+1) - f(x, b+1), 0)] (for a loss), where best(b+1) is the
lowest validation loss any architecture has reached at that epoch (the lowest overall while none has),
and trains it one epoch further from its checkpoint (`step_epochs`). Candidates: every started
architecture that is not finished, running or diverged, at its next epoch, and `pool` unseen ones drawn
at random for each decision, at epoch 1.

Where this differs from the paper, for CPU time on tables of 14,322 architectures (stated, not tuned):
the GP is fit on each architecture's latest result only (the paper: every result), on at most
`max_points` of them (those trained furthest), and unseen architectures enter through a random pool
rather than all at once. Needs torch (extra `proxies`); one thread; seeded from the trial's seed.
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs
from optimizers.learning_curve.freeze_thaw import FreezeThawSearch


class DyHPO(FreezeThawSearch):
    full_fidelity_setting = "max_epochs"
    name = "dyhpo"
    description = ("DyHPO (Wistuba et al. 2022): a deep-kernel GP over configuration, budget and learning curve; "
                   "the candidate with the best multi-fidelity EI at its next epoch trains one epoch further")
    needs = frozenset({"epochs", "encoding"})
    requires = {"torch": "pip install -e '.[proxies]' (CPU torch 2.13.0)"}

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"      # feature kind x: the space's encoding, or g2v-10d etc.
        initial: int = 4                # random architectures trained one epoch before the model is used
        step_epochs: int = 1            # epochs a chosen architecture is trained further per step
        pool: int = 100                 # unseen architectures drawn as candidates at each decision
        max_points: int = 300           # GP training points (each architecture's latest result), at most
        hidden: int = 64                # units of the two fully connected layers
        embedding: int = 16             # output dimension of the feature network (the kernel's input)
        channels: int = 4               # 1-D convolution filters over the learning curve
        fit_steps: int = 300            # Adam steps of the first fit
        refit_steps: int = 30           # warm-started Adam steps per refit
        refit_every: int = 5            # new results between refits
        learning_rate: float = 1e-2
        max_epochs: int = 50            # the full budget (the benchmark's: make_algorithm sets it)

        def __post_init__(self):
            if min(self.initial, self.step_epochs, self.pool, self.max_points, self.hidden, self.embedding,
                   self.channels, self.fit_steps, self.refit_every) < 1 or self.refit_steps < 0 \
                    or not self.learning_rate > 0 or self.max_epochs < 2:
                raise UserError("dyhpo needs initial, step_epochs, pool, max_points, hidden, embedding, channels, "
                                "fit_steps, refit_every >= 1, refit_steps >= 0, learning_rate > 0, max_epochs >= 2")

    def start(self, inputs: SearchInputs) -> None:
        import torch

        if inputs.features is None:
            raise UserError("dyhpo needs features (setting 'features')")
        x = np.asarray(inputs.features, dtype=np.float64)
        low, high = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
        self._x = torch.tensor(np.nan_to_num((x - low) / np.where(high > low, high - low, 1.0)), dtype=torch.float64)
        self._seed = int(inputs.seed)
        self._begin(inputs)
        self._best_at = np.full(self.settings.max_epochs + 1, math.inf)   # lowest validation loss at each epoch
        self._model, self._train, self._fitted_at = None, None, 0

    # -- the model ------------------------------------------------------------------------------------
    def _network(self):
        import torch

        s, d = self.settings, self._x.shape[1]
        torch.manual_seed(self._seed)

        class Phi(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv1d(1, s.channels, 3, padding=1)
                self.body = torch.nn.Sequential(torch.nn.Linear(d + 2 + s.channels, s.hidden), torch.nn.ReLU(),
                                                torch.nn.Linear(s.hidden, s.hidden), torch.nn.ReLU(),
                                                torch.nn.Linear(s.hidden, s.embedding))
                self.log_length = torch.nn.Parameter(torch.zeros(()))
                self.log_scale = torch.nn.Parameter(torch.zeros(()))
                self.log_noise = torch.nn.Parameter(torch.tensor(-3.0))

            def forward(self, x, t, curve, last):
                pooled = torch.relu(self.conv(curve.unsqueeze(1))).amax(dim=2)
                return self.body(torch.cat([x, t.unsqueeze(1), last.unsqueeze(1), pooled], dim=1))

        return Phi().double()

    def _inputs(self, rows, epochs):
        """(x, t, curve before `epochs`, its last value) tensors for rows at budgets `epochs` (1-based); curve
        values standardised, 0 where not paid for (a new architecture: all 0)."""
        import torch

        rows, epochs = np.asarray(rows), np.asarray(epochs)
        mask = np.arange(self.settings.max_epochs)[None, :] < (epochs - 1)[:, None]
        curves = np.nan_to_num(np.where(mask, (self._curves[rows] - self._mean) / self._std, 0.0))
        last = curves[np.arange(len(rows)), np.maximum(epochs - 2, 0)] * (epochs > 1)
        return (self._x[torch.as_tensor(rows)], torch.as_tensor(epochs / self.settings.max_epochs),
                torch.as_tensor(curves), torch.as_tensor(last))

    def _kernel(self, a, b):
        import torch

        model = self._model
        d2 = torch.cdist(a, b).pow(2)
        return torch.exp(model.log_scale) * torch.exp(-0.5 * d2 / torch.exp(2 * model.log_length))

    def _fit(self) -> None:
        import torch

        s = self.settings
        torch.set_num_threads(1)
        started = np.flatnonzero(self._trained > 0)
        started = started[np.isfinite(self._curves[started, self._trained[started] - 1])]
        rows = started[np.argsort(-self._trained[started], kind="stable")][:s.max_points]
        if not len(rows):                    # every run so far diverged: nothing to learn from yet
            self._train, self._fitted_at = None, self._results
            return
        epochs = self._trained[rows]
        y = self._curves[rows, epochs - 1]
        self._mean, self._std = float(y.mean()), float(y.std()) or 1.0
        target = torch.as_tensor((y - self._mean) / self._std)
        first = self._model is None
        if first:
            self._model = self._network()
            self._optimiser = torch.optim.Adam(self._model.parameters(), lr=s.learning_rate)
        inputs = self._inputs(rows, epochs)
        target = target - inputs[3]          # the GP models the change from the last value (its prior mean)
        eye = torch.eye(len(rows), dtype=torch.float64)
        with torch.enable_grad():
            for _ in range(s.fit_steps if first else s.refit_steps):
                self._optimiser.zero_grad()
                z = self._model(*inputs)
                k = self._kernel(z, z) + (torch.exp(self._model.log_noise) + 1e-6) * eye
                chol = torch.linalg.cholesky(k)
                alpha = torch.cholesky_solve(target.unsqueeze(1), chol)
                nll = 0.5 * (target.unsqueeze(1) * alpha).sum() + torch.log(torch.diagonal(chol)).sum()
                nll.backward()
                self._optimiser.step()
        with torch.no_grad():
            z = self._model(*inputs)
            k = self._kernel(z, z) + (torch.exp(self._model.log_noise) + 1e-6) * eye
            self._train = (z, torch.linalg.cholesky(k), target)
        self._fitted_at = self._results

    def predict(self, rows, epochs) -> tuple[np.ndarray, np.ndarray]:
        """GP posterior (mean, std) of the validation loss of `rows` at `epochs` (standardisation undone)."""
        import torch

        z_train, chol, target = self._train
        with torch.no_grad():
            inputs = self._inputs(rows, epochs)
            z = self._model(*inputs)
            cross = self._kernel(z, z_train)
            mean = inputs[3].unsqueeze(1) + cross @ torch.cholesky_solve(target.unsqueeze(1), chol)
            v = torch.cholesky_solve(cross.T, chol)
            var = torch.exp(self._model.log_scale) - (cross * v.T).sum(dim=1)
        std = torch.sqrt(torch.clamp(var, min=1e-12))
        return mean.squeeze(1).numpy() * self._std + self._mean, std.numpy() * self._std

    # -- the freeze-thaw loop (optimizers.learning_curve.freeze_thaw) -----------------------------------
    def _ready(self) -> bool:
        if self._model is None or self._results - self._fitted_at >= self.settings.refit_every:
            self._fit()
        return self._train is not None

    def _scores(self, rows: np.ndarray) -> np.ndarray:
        """Multi-fidelity EI at each row's next epoch, against the lowest loss reached at that epoch."""
        from scipy.special import ndtr

        epochs = self._next_epochs(rows)
        mean, std = self.predict(rows, epochs)
        overall = self._best_at.min()
        best = np.array([self._best_at[e] if math.isfinite(self._best_at[e]) else overall for e in epochs])
        std = np.maximum(std, 1e-9)
        z = (best - mean) / std
        return (best - mean) * ndtr(z) + std * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)

    def _observed(self, row: int, epoch: int, value: float) -> None:
        self._best_at[epoch] = min(self._best_at[epoch], value)
