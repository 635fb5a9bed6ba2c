"""Proxy-guided Hyperband: each bracket's new architectures are the best-scored of a larger pool."""
from dataclasses import dataclass

from benchmarks.core.errors import UserError
from benchmarks.proxies.minibatch import check_split
from optimizers.base import SearchInputs
from optimizers.multi_fidelity.hyperband import PROMOTE_MODES, Hyperband, bracket_schedule
from optimizers.training_free.candidates import DEFAULT_SCORE_COST_S, ScoredCandidates


class ProxyHyperband(Hyperband):
    name = "phb"
    needs = frozenset({"epochs", "proxies"})
    description = "Hyperband whose new architectures are the best by hidden covariance of 3x as many"

    @dataclass(frozen=True)
    class Settings:
        max_epochs: int = 50
        eta: int = 3
        bracket_budget_epochs: float | None = None
        promote: str = "best"
        metric: str = "hidden_covariance_l1"
        score_split: str = "train"           # corpus split of the scoring minibatch: train or test
        higher_is_better: bool = True
        oversample: int = 3                    # candidates scored per architecture started; 1 = plain HB
        score_cost_s: float = DEFAULT_SCORE_COST_S

        def __post_init__(self):
            check_split(self.score_split)
            if self.oversample < 1 or self.score_cost_s < 0 or self.promote not in PROMOTE_MODES:
                raise UserError("phb needs oversample >= 1, score_cost_s >= 0 and promote best|worst")
            bracket_schedule(self.max_epochs, self.eta, self.bracket_budget_epochs)

    def config_source(self, inputs: SearchInputs):
        s = self.settings
        candidates = ScoredCandidates(inputs, s.metric, s.higher_is_better, s.score_cost_s)
        return lambda n: candidates.take_best(n, n * s.oversample)   # (rows, scoring seconds)
