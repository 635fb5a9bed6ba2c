"""Proxy-guided random search: score a pool of random candidates, train only the best-scored.

Each free worker scores the next pool (its scoring time is the job's overhead) and trains the best;
K workers do so side by side, as random search does."""
from dataclasses import dataclass

from benchmarks.core.errors import UserError
from benchmarks.proxies.minibatch import check_split
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.training_free.candidates import DEFAULT_SCORE_COST_S, ScoredCandidates


class ProxyRandomSearch(Algorithm):
    name = "prs"
    needs = frozenset({"epochs", "proxies"})
    description = "random search that scores pools of 10 with hidden covariance and trains the best 50 epochs"

    @dataclass(frozen=True)
    class Settings:
        metric: str = "hidden_covariance_l1"   # Serianni & Kalita's best (Kendall tau 0.37)
        score_split: str = "train"           # corpus split of the scoring minibatch: train or test
        higher_is_better: bool = True          # higher hidden covariance goes with lower test loss
        pool_size: int = 10                    # candidates scored per trained architecture; 1 = plain RS
        epochs: int = 50                       # epochs each chosen architecture is trained
        score_cost_s: float = DEFAULT_SCORE_COST_S   # simulated seconds charged per scored candidate

        def __post_init__(self):
            check_split(self.score_split)
            if self.pool_size < 1 or self.score_cost_s < 0:
                raise UserError("prs needs pool_size >= 1 and score_cost_s >= 0")

    def start(self, inputs: SearchInputs) -> None:
        s = self.settings
        self._candidates = ScoredCandidates(inputs, s.metric, s.higher_is_better, s.score_cost_s)

    def ask(self) -> Job | None:
        best, scoring_s = self._candidates.take_best(1, self.settings.pool_size)
        return Job(best[0], self.settings.epochs, scoring_s) if best else None
