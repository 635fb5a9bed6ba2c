"""Candidates ranked by a cached training-free score, for proxy-guided search.

The universe is the set of architectures that have a cached score (`nasbench proxies build`), cells
whose score is not finite included (they rank last: the searcher learns that only by paying to score
them). It should be the whole benchmark (`--all`) or a uniform sample (`--sample N`): a universe
scored with `--completed-only` holds no diverged cells and so hands the searcher knowledge it could
not have. Scoring a candidate costs `score_cost_s` simulated seconds, charged as the overhead of the
job that trains the chosen architectures, so a proxy-guided search pays for its filter.
"""
import bisect

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs

# CPU seconds of one thread to score one cell with every metric in one pass (minibatch 32 x 20),
# measured on the 2-core development machine (benchmarks/proxies/score_cache.py); one GPU-epoch of
# a NAS-Bench-NLP cell takes 60-250 s, so scoring ten candidates costs less than one epoch.
DEFAULT_SCORE_COST_S = 2.0


class ScoredCandidates:
    """Draws architectures without replacement from the scored universe, in random order, and keeps
    the best-scored of each pool."""

    def __init__(self, inputs: SearchInputs, metric: str, higher_is_better: bool, score_cost_s: float):
        scores = inputs.scores
        if scores is None or not np.isfinite(scores).any():
            name = inputs.search.name
            raise UserError(f"no cached '{metric}' scores for benchmark '{name}'; run `nasbench proxies build "
                            f"--metric {metric} --all{'' if name == 'ptb' else ' --benchmark ' + name}` first")
        universe = np.flatnonzero(~np.isnan(scores))
        self.order = universe[inputs.rng.permutation(len(universe))].tolist()
        key = -scores if higher_is_better else scores           # lower key = better
        self.key = np.where(np.isfinite(scores), key, np.inf)   # a degenerate score ranks last
        self.position = 0
        self.score_cost_s = float(score_cost_s)
        self.passed_over: list = []     # scored candidates not taken, in the order they were scored
        self._passed_over_next = None   # once drawn from: position in passed_over, sorted by score
        # how a scored pool is ordered, best first: None = by key alone; else rank_pool(pool, key) -> positions
        self.rank_pool = None
        self._taken = np.zeros(len(scores), dtype=bool)    # drawn by a pool of the whole table, or chosen
        self._scored = np.zeros(len(scores), dtype=bool)   # from a stratum pool; score paid for
        self._stratum_position: dict = {}   # stratum name -> position in `order` its next pool starts from
        self._seen_keys: list = []          # keys of every candidate scored by take_above, ascending

    @property
    def universe_size(self) -> int:
        return len(self.order)

    def take_best(self, n: int, pool_size: int, stratum: tuple | None = None) -> tuple[list, float]:
        """Score a pool of `pool_size` new candidates; the `n` best by score (best first) and the
        simulated seconds the scoring costs. A pool of size n is not scored (nothing to choose): 0 s.

        `stratum`: (name, [n] bool mask): the pool is the next candidates of the same random order in the
        mask that no pool has taken (an empty list once none is left). Only the chosen are taken: the
        others stay for later pools of the whole table, which pay no second time for a known score."""
        if stratum is None:
            pool, self.position = self._next_untaken(self.position, pool_size)
        else:
            name, mask = stratum
            pool, self._stratum_position[name] = self._next_untaken(self._stratum_position.get(name, 0), pool_size,
                                                                    mask)
        if len(pool) <= n:
            self._taken[pool] = True
            return pool, 0.0
        cost = int((~self._scored[pool]).sum()) * self.score_cost_s
        self._scored[pool] = True
        ranked = np.argsort(self.key[pool], kind="stable") if self.rank_pool is None \
            else np.asarray(self.rank_pool(pool, self.key), dtype=np.int64)
        chosen = [pool[k] for k in ranked[:n]]
        if stratum is None:
            self.passed_over.extend(pool[k] for k in ranked[n:])
        self._taken[chosen if stratum is not None else pool] = True
        return chosen, cost

    def take_above(self, share: float, warm: int) -> tuple[int | None, float]:
        """Score new candidates one at a time, in the random order, until one ranks in the top `share` of
        every score this method has seen (the first `warm` are scored as one pool, whose best is taken);
        that one and the simulated seconds the scoring cost. The others are passed over. (None, seconds)
        once no candidate is left to score."""
        cost = 0.0
        while True:
            pool, self.position = self._next_untaken(self.position, 1)
            if not pool:
                return None, cost
            row = pool[0]
            cost += 0.0 if self._scored[row] else self.score_cost_s
            self._scored[row] = self._taken[row] = True
            key = float(self.key[row])
            bisect.insort(self._seen_keys, key)
            seen = len(self._seen_keys)
            if seen > warm and key <= self._seen_keys[max(0, int(share * seen) - 1)]:
                return row, cost
            self.passed_over.append(row)
            if seen == warm:     # the first pool: its best is taken
                best = min(self.passed_over[-warm:], key=lambda r: self.key[r])
                self.passed_over.remove(best)
                return best, cost

    def _next_untaken(self, position: int, pool_size: int, mask: np.ndarray | None = None) -> tuple[list, int]:
        """The next `pool_size` architectures of `order` from `position` on (in `mask`, if given) that no
        pool has taken, and the position after the last one looked at."""
        pool = []
        while len(pool) < pool_size and position < len(self.order):
            row = self.order[position]
            position += 1
            if not self._taken[row] and (mask is None or mask[row]):
                pool.append(row)
        return pool, position

    def take_passed_over(self) -> int | None:
        """The best-scored candidate scored earlier but not taken (no new scoring: 0 s), or None."""
        if self._passed_over_next is None:
            self.passed_over.sort(key=lambda row: self.key[row])    # stable: ties keep scoring order
            self._passed_over_next = 0
        if self._passed_over_next >= len(self.passed_over):
            return None
        self._passed_over_next += 1
        return self.passed_over[self._passed_over_next - 1]
