"""A batch successive-halving plugin for a multi-fidelity benchmark (ptb, wt2).

    nasbench run --algo examples/successive_halving.py:SuccessiveHalving --benchmark ptb --trials 30

Each round draws `candidates` random cells, trains them all for the first rung's epochs as one batch
(it runs on every free simulated worker), keeps the best `1/eta` by validation log-perplexity and
trains those to the next rung from their checkpoints, up to the benchmark's full fidelity; then a new
round starts, until the budget ends the trial. It is written as straight-line code
(`SequentialAlgorithm`): `yield` a list of jobs, receive their observations in the same order.
"""
import math
from dataclasses import dataclass

from nasbench import Job, SequentialAlgorithm


class SuccessiveHalving(SequentialAlgorithm):
    name = "sh-batch"
    description = "batch successive halving: rungs 1, 3, 9, 27, then full fidelity; eta 3"
    needs = frozenset({"epochs"})          # it stops training early: only multi-fidelity benchmarks

    @dataclass(frozen=True)
    class Settings:
        candidates: int = 81       # random cells per round
        eta: int = 3               # keep the best 1/eta at each rung
        first_epochs: int = 1      # the first rung (epochs)

    def search(self, inputs):
        table = inputs.search                      # the searcher's view: no test losses
        full = table.max_epochs                    # 50 on ptb and wt2
        untried = [int(row) for row in inputs.rng.permutation(table.n)]   # rows 0..n-1, not ids
        while untried:
            alive, untried = untried[:self.settings.candidates], untried[self.settings.candidates:]
            epochs = self.settings.first_epochs
            while alive:
                observations = yield [Job(row, epochs) for row in alive]
                if epochs >= full:
                    break
                ranked = sorted(zip(alive, observations), key=lambda pair: _loss(pair[1]))
                alive = [row for row, _ in ranked[:max(1, len(alive) // self.settings.eta)]]
                epochs = min(full, epochs * self.settings.eta)


def _loss(observation) -> float:
    """Validation log-perplexity at the epochs reached; a diverged run ranks last."""
    loss = observation.last_val_loss
    return loss if observation.status == "OK" and math.isfinite(loss) else math.inf
