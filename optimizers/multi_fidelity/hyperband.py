"""Hyperband (Li et al., 2017) over epochs: brackets of successive halving on the validation loss.

Max resource R = `max_epochs`, reduction factor `eta`; s_max = floor(log_eta R). Bracket s (from s_max
down to 0) starts n = ceil(B/R * eta^s / (s+1)) new architectures, B = (s_max+1) R epochs by default,
at r = R eta^-s epochs; rung i trains the survivors to r_i = floor(r eta^i) epochs and keeps the best
floor(n_i / eta) of them, n_i = floor(n eta^-i), by validation log-perplexity. The rounding is the
NAS-Bench-NLP release's (`int(np.floor(...))` on floats): for R = 50, eta = 3 it gives

    s=3: 27 x 1 -> 9 x 5 -> 3 x 16 -> 1 x 49 epochs    s=2: 12 x 5 -> 4 x 16 -> 1 x 50
    s=1:  6 x 16 -> 2 x 49                             s=0:  4 x 50

(50/27*27 is 49.999... in floating point, hence 49). Promoted models continue from their checkpoint,
so the environment charges only the extra epochs. A model whose run diverged or stopped early, or
whose validation loss is not finite, is dropped (so a rung may promote fewer than floor(n_i / eta)).
Brackets repeat (s_max..0, again and again) until the simulated budget is spent; new architectures
are drawn without replacement over the whole trial (the release draws each bracket independently
and runs the four brackets once).
`bracket_budget_epochs` sets B; the release's notebook used B = 100 R / 3.5 to match its random search.

With K workers this is synchronous Hyperband: each rung is one batch of jobs spread over the free
workers, and the next rung (or bracket) starts only when every job of the rung has ended, so workers
sit idle at each rung's barrier (visible in the job log and the utilisation figure).

`promote="worst"` is a TEST HOOK, not an algorithm: it promotes the worst floor(n_i / eta) instead
of the best, a planted regression that the CI gate's tests must detect. Never use it for results.
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Job, SearchInputs, SequentialAlgorithm

PROMOTE_MODES = ("best", "worst")


@dataclass(frozen=True)
class Rung:
    """One rung of a bracket: `n_configs` (the release's n_i) trained to `epochs`, `keep` promoted."""
    n_configs: int
    epochs: int
    keep: int


def bracket_schedule(max_epochs: int = 50, eta: int = 3,
                     bracket_budget_epochs: float | None = None) -> list[list[Rung]]:
    """The rungs of each bracket s = s_max..0, computed exactly as the released NAS-Bench-NLP code."""
    if max_epochs < 1 or eta < 2:
        raise UserError(f"hyperband needs max_epochs >= 1 and eta >= 2, got max_epochs={max_epochs}, eta={eta}")
    R = max_epochs
    s_max = int(np.floor(np.log(R) / np.log(eta)))
    B = (s_max + 1) * R if bracket_budget_epochs is None else float(bracket_budget_epochs)
    if B <= 0:
        raise UserError(f"hyperband bracket_budget_epochs must be positive, got {B}")
    brackets = []
    for s in range(s_max, -1, -1):
        n = int(np.ceil(float(B) / R * float(eta) ** s / (s + 1)))
        r = R * float(eta) ** (-s)
        rungs = []
        for i in range(s + 1):
            n_i = int(np.floor(n * float(eta) ** (-i)))
            r_i = max(1, min(R, int(np.floor(r * eta ** i))))
            rungs.append(Rung(n_i, r_i, int(np.floor(n_i / float(eta)))))
        brackets.append(rungs)
    return brackets


class Hyperband(SequentialAlgorithm):
    name = "hb"
    needs = frozenset({"epochs"})
    description = "Hyperband, R = 50 epochs, eta = 3, B = 200 epochs (Li et al.; the release: hb-release), promoted models continue from checkpoints"

    @dataclass(frozen=True)
    class Settings:
        max_epochs: int = 50          # R, the most epochs one architecture is trained
        eta: int = 3                  # reduction factor between rungs
        bracket_budget_epochs: float | None = None   # B in epochs; None -> (s_max + 1) * R (Li et al.)
        promote: str = "best"         # "best"; "worst" is a planted-regression TEST HOOK (see module doc)

        def __post_init__(self):
            if self.promote not in PROMOTE_MODES:
                raise UserError(f"hb setting promote must be one of {', '.join(PROMOTE_MODES)}, "
                                f"got '{self.promote}'")
            bracket_schedule(self.max_epochs, self.eta, self.bracket_budget_epochs)   # validates the rest

    def config_source(self, inputs: SearchInputs):
        """Where new architectures come from: `take(n) -> (rows, overhead_s)`, the seconds of work
        choosing them costs (override to filter candidates)."""
        return permutation_source(inputs)

    def search(self, inputs: SearchInputs):
        settings = self.settings
        worst = settings.promote == "worst"
        brackets = bracket_schedule(settings.max_epochs, settings.eta, settings.bracket_budget_epochs)
        new_configs = self.config_source(inputs)
        passes = self.passes()
        done_passes = 0
        while passes is None or done_passes < passes:
            done_passes += 1
            for rungs in brackets:
                configs, overhead_s = new_configs(rungs[0].n_configs)
                if not configs:
                    return
                for rung in rungs:
                    jobs = [Job(row, rung.epochs) for row in configs]
                    if overhead_s:      # choosing the bracket's architectures: before its first job
                        jobs[0] = Job(configs[0], rung.epochs, overhead_s)
                        overhead_s = 0.0
                    losses = []
                    for obs in (yield jobs):
                        loss = obs.last_val_loss if obs.status == "OK" and obs.epochs == rung.epochs else math.inf
                        losses.append(loss if math.isfinite(loss) else math.inf)
                    configs = _promote(configs, losses, rung.keep, worst)
                    if not configs:
                        break


    def passes(self) -> int | None:
        """How many times the brackets s_max..0 run; None: again and again until the budget is spent."""
        return None


class HyperbandRelease(Hyperband):
    """Hyperband exactly as the NAS-Bench-NLP release's notebook runs it: B = 100 R / 3.5 epochs (about
    1428.6, "to approximately match budgets in random search"), each bracket's architectures drawn
    independently (so one may appear in several brackets; one already trained further costs nothing),
    and the four brackets run once. It ends long before 1000 simulated hours (about 220 h)."""
    name = "hb-release"
    description = "Hyperband as the release's notebook: B = 100R/3.5, brackets drawn independently, one pass"

    @dataclass(frozen=True)
    class Settings(Hyperband.Settings):
        bracket_budget_epochs: float | None = 100 * 50 / 3.5   # the release's B
        passes: int = 1               # times the brackets s_max..0 run (the release: once)

        def __post_init__(self):
            super().__post_init__()
            if self.passes < 1:
                raise UserError(f"hb-release setting passes must be >= 1, got {self.passes}")

    def config_source(self, inputs: SearchInputs):
        """`take(n)`: n rows drawn without replacement within the bracket, independently of other
        brackets (the release's `np.random.choice(len(search_set), n, replace=False)`), at no cost."""
        def take(n: int) -> tuple[list, float]:
            return inputs.rng.choice(inputs.search.n, size=min(n, inputs.search.n), replace=False).tolist(), 0.0

        return take

    def passes(self) -> int | None:
        return int(self.settings.passes)


def permutation_source(inputs: SearchInputs):
    """`take(n)`: the next n rows of one random permutation of the benchmark (no replacement), at no
    cost (0 s)."""
    order = inputs.rng.permutation(inputs.search.n).tolist()
    position = 0

    def take(n: int) -> tuple[list, float]:
        nonlocal position
        chunk = order[position:position + n]
        position += len(chunk)
        return chunk, 0.0

    return take


def _promote(configs: list, losses: list, keep: int, worst: bool) -> list:
    """The `keep` best (or, as a test hook, worst) of `configs` by loss, in that rank order (ties keep
    the training order); a non-finite loss is never promoted."""
    if keep <= 0:
        return []
    loss = np.asarray(losses, dtype=np.float64)
    key = np.where(np.isfinite(loss), -loss, np.inf) if worst else loss
    ranked = np.argsort(key, kind="stable")[:keep]
    return [configs[k] for k in ranked if math.isfinite(loss[k])]
