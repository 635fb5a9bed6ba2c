"""Proxy-guided random search: score a pool of random candidates, train only the best-scored."""
from dataclasses import dataclass

from benchmarks.errors import UserError
from optimizers.base import Algorithm, SearchInputs
from optimizers.proxy_candidates import DEFAULT_SCORE_COST_S, ScoredCandidates


class ProxyRandomSearch(Algorithm):
    name = "prs"
    description = "random search that scores pools of 10 with hidden covariance and trains the best 50 epochs"

    @dataclass(frozen=True)
    class Settings:
        metric: str = "hidden_covariance_l1"   # Serianni & Kalita's best (Kendall tau 0.37)
        higher_is_better: bool = True          # higher hidden covariance goes with lower test loss
        pool_size: int = 10                    # candidates scored per trained architecture; 1 = plain RS
        epochs: int = 50                       # epochs each chosen architecture is trained
        score_cost_s: float = DEFAULT_SCORE_COST_S   # simulated seconds charged per scored candidate

        def __post_init__(self):
            if self.pool_size < 1 or self.score_cost_s < 0:
                raise UserError("prs needs pool_size >= 1 and score_cost_s >= 0")

    def run(self, inputs: SearchInputs) -> None:
        s = self.settings
        candidates = ScoredCandidates(inputs, s.metric, s.higher_is_better, s.score_cost_s)
        train = inputs.env.train
        while True:
            best = candidates.take_best(1, s.pool_size)
            if not best:
                return
            train(best[0], s.epochs)
