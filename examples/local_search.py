"""A local-search plugin for any benchmark whose search space offers neighbours (bert, ptb, wt2).

    nasbench run --algo examples/local_search.py:LocalSearch --benchmark bert --trials 30

Start from a random evaluated architecture; evaluate its neighbours (`space.neighbours`, one change
each) in a random order, each snapped to the nearest untrained evaluated architecture by the space's
own distance (a benchmark holds results only for its table); move to the first one that improves the
validation loss (first improvement), and restart from a random architecture at a local optimum. Every
evaluation is at the benchmark's full fidelity. With K workers, K neighbours are evaluated side by side.
"""
import math
from dataclasses import dataclass

from nasbench import Algorithm, Job


class LocalSearch(Algorithm):
    name = "local-search"
    description = "first-improvement local search over the space's neighbours, snapped to evaluated ones"
    needs = frozenset({"neighbours", "encoding", "distance"})

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"     # the space's own encoding: snapping measures distance on it

    def start(self, inputs):
        from benchmarks.core.space import Snapper, architectures

        self.table, self.rng = inputs.search, inputs.rng
        self.space = inputs.search.space
        self.archs = architectures(inputs.search)            # the architecture of every row
        self.snapper = Snapper(self.space, inputs.features, inputs.rng)
        self.loss = {}                                       # row -> validation loss at full fidelity
        self.current = None                                  # row we search around
        self.queue = []                                      # neighbours of `current` not yet asked

    def ask(self):
        if self.current is None or not self.queue:
            if self.current is not None and self.current not in self.loss:
                return None                                  # wait for the start point's result
            row = self._restart()
        else:
            row = self.snapper.snap(self.queue.pop())
        return None if row is None else Job(row, self.table.max_epochs)

    def tell(self, job, observation):
        loss = observation.last_val_loss
        self.loss[job.arch] = loss if observation.status == "OK" and math.isfinite(loss) else math.inf
        if self.current is None or self.loss[job.arch] < self.loss.get(self.current, math.inf):
            self.current = job.arch                           # first improvement: move there
            neighbours = self.space.neighbours(self.archs[job.arch])
            self.queue = [neighbours[k] for k in self.rng.permutation(len(neighbours))]

    def _restart(self):
        untrained = [row for row in range(self.table.n) if not self.snapper.trained[row]]
        if not untrained:
            return None
        row = int(untrained[int(self.rng.integers(len(untrained)))])
        self.snapper.trained[row] = True
        self.current, self.queue = None, []
        return row
