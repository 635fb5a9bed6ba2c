"""Learning-curve-aware asynchronous successive halving (`lcbo`).

ASHA's loop (Li et al. 2020): a free worker gets the best promotable result of the highest rung, or
else a new architecture at the first rung. Three things differ, each a setting (ablations switch
them off one at a time):

- **Rungs and quotas.** Rungs at 1, 2, 9 and 50 epochs; a result is promoted while it ranks among
  the top `keep` share of its rung's results (1/5 after 1 epoch, 1/20 after 2, 1/3 after 9). The
  second epoch is cheap and tells a lot: the slope of a learning curve between epochs 1 and 2
  separates the cells that keep improving from those that have flattened. For the first hours, a
  rung's first promotions use looser shares (`early_keep`: 1/3, 1/5, 1/3, up to `early_cap` 40, 8
  and 3 promotions), so a cell reaches 50 epochs after about 45 new cells instead of 300. A quota
  counts promotions, so once a rung has used its count even a new best result would wait until
  enough results arrive to raise it; with `promote_top` 1 a rung's best result goes on at once (as
  in ASHA, where the top of a rung is always promotable), so a strong cell found while a rung's
  count is used up is not left behind the screening of new cells.
- **Ranking by a learned curve model, not by the last loss.** A result at rung k is ranked by a
  prediction of its validation log-perplexity at rung k+1 from what the trial paid for: the last
  validation loss, the slope of the paid validation curve over its last epoch, the last training
  loss, and (if set) the training-free score and the graph features. The model is a bag of `bags`
  ridge regressions on bootstrap samples of this trial's own promoted results (the only ones whose
  next-rung loss it has seen); ranking uses mean - `beta` x std across the bag (optimism about
  uncertain curves). Until `min_points` results have reached the next rung, the rank comes from
  the linear extrapolation last + `slope_weight` x (last - previous).
- **New architectures from a training-free filter** (if `metric` is set): each new architecture is
  the best-scored of `oversample` random unscored candidates, each score charged `score_cost_s`
  simulated seconds to the job that starts it (as `phb`).
- **A used-up table.** Once every cell has been started (a small table such as wt2, or several
  workers), the quotas no longer save budget for new cells: a free worker then promotes the best
  not-yet-promoted result of the highest rung that has one, so the budget is spent on the most
  promising curves instead of ending the trial early.

Promotions over more than `report_every` epochs (2 -> 9, 9 -> 50) train in legs of at most that many
epochs, each a job of its own that goes out again at once: the same decisions and epochs as one job per
promotion at one worker (with several, other jobs interleave differently), but the harness sees each
leg's epochs as it ends (the incumbent and the trial's front move after epoch 13 of a cell rather than
50), which is what a practitioner watching a run would have.

Fairness: the model's data are the validation/train losses of epochs this trial trained (kept from
its own observations), the feature rows and the training-free scores; nothing from the table's
unseen epochs or test losses. Each fit is kept in `self.fits` for the tests to check that.
"""
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.proxies.minibatch import check_split
from optimizers.base import Algorithm, Job, SearchInputs


def parse_numbers(text: str, kind, what: str) -> list:
    try:
        values = [kind(t) for t in str(text).split(",") if t.strip()]
    except ValueError:
        raise UserError(f"lcbo {what} must be a comma list of numbers, got '{text}'") from None
    if not values:
        raise UserError(f"lcbo {what} must not be empty")
    return values


def epochs_only_rungs(max_epochs: int) -> str:
    """lcbo's rungs 1/2/9/50 scaled to a table of `max_epochs` (1, 2, 9 * R / 50 rounded, R; duplicates
    and rungs at or above R dropped), for its epochs-only mode."""
    levels = [1, 2, max(1, round(9 * max_epochs / 50))]
    return ",".join(str(e) for e in sorted({e for e in levels if e < max_epochs}) + [max_epochs])


class LearningCurveBO(Algorithm):
    name = "lcbo"
    needs = frozenset({"epochs"})       # + "proxies" while `metric` names a training-free score (the default)

    @classmethod
    def adapt_settings(cls, settings, spec):
        """The epochs-only mode, chosen automatically on a benchmark without training-free scores (lora-*):
        new architectures drawn at random (`metric` None), rungs 1/2/9/50 scaled to its top fidelity. The
        changed settings are recorded in every result file; on ptb and wt2 nothing changes."""
        from dataclasses import fields, replace

        if "proxies" in spec.offers:
            return settings
        default = cls.Settings()
        changes = {}
        if settings.metric == default.metric:
            changes["metric"] = None
        if settings.rungs == default.rungs and spec.max_epochs != 50:
            rungs = epochs_only_rungs(spec.max_epochs)
            count = len(rungs.split(",")) - 1
            changes["rungs"] = rungs
            for name in ("keep", "early_keep", "early_cap"):     # one entry per rung but the last
                values = getattr(settings, name).split(",")
                changes[name] = ",".join((values + values[-1:] * count)[:count])
        return replace(settings, **{k: v for k, v in changes.items() if k in {f.name for f in fields(settings)}})
    description = ("learning-curve-aware ASHA: rungs 1/2/9/50 epochs, looser quotas for the first promotions, "
                   "a rung's best always goes on, promotion by a bagged ridge curve model fit online, new cells the "
                   "best by hidden covariance of 16, reported every 4 epochs")

    @dataclass(frozen=True)
    class Settings:
        rungs: str = "1,2,9,50"              # epochs of each rung, ascending; the last is full training
        keep: str = "0.2,0.05,0.333"         # share of a rung's results promoted to the next (one per rung but the last)
        slope_weight: float = 1.0            # fallback rank: last + slope_weight * (last - previous epoch)
        model: bool = True                   # rank by the learned curve model once it has min_points
        min_points: int = 20                 # next-rung results needed before a rung's model is used
        refit_every: int = 10                # new next-rung results between refits
        bags: int = 10                       # bootstrap ridge models; their spread is the std
        ridge: float = 1e-3                  # L2 penalty on standardised inputs
        beta: float = 1.0                    # rank by mean - beta * std
        metric: str | None = "hidden_covariance_l1"   # training-free score for new cells; None = uniform
        score_split: str = "train"           # corpus split of the scoring minibatch: train or test
        higher_is_better: bool = True
        oversample: int = 16                 # candidates scored per new architecture (1 = no filter)
        filter_share: float = 0.0            # > 0: instead, candidates are scored one at a time and the first in
        #                                      the top share of the scores seen so far is started (tried, not
        #                                      adopted: docs/results/lcbo.md#tried-and-not-adopted)
        score_cost_s: float = 2.0            # simulated seconds charged per scored candidate
        score_in_model: bool = True          # the model also reads the training-free score
        features: str | None = None          # graph feature kind the model also reads (None: none)
        head_start: int = 0                  # cells trained straight to a deep rung first (anytime), the
        head_start_pool: int = 30            # best-scored of this many candidates (needs `metric`)
        head_start_rung: int = -1            # the rung they go to first (index into rungs; -1: the last), then
        #                                      straight on to the last rung, before anything else
        early_keep: str = "0.333,0.2,0.333"  # anytime: a looser share per rung (as keep) for its first promotions,
        early_cap: str = "40,8,3"            # at most this many per rung; then keep alone (0,0,0: keep only)
        promote_top: int = 1                 # a result among its rung's top this many (and in its top `keep`
        #                                      share) goes on even when the rung's promotions are used up (0: off)
        report_every: int = 4                # a promotion trains in jobs of at most this many epochs, each
        #                                      reported as it ends (same decisions; 0: one job per promotion)

        def __post_init__(self):
            check_split(self.score_split)
            rungs = parse_numbers(self.rungs, int, "rungs")
            keep = parse_numbers(self.keep, float, "keep")
            if rungs != sorted(set(rungs)) or rungs[0] < 1:
                raise UserError(f"lcbo rungs must be increasing epoch counts >= 1, got '{self.rungs}'")
            if len(keep) != len(rungs) - 1 or not all(0 < k <= 1 for k in keep):
                raise UserError(f"lcbo keep needs one share in (0, 1] per rung but the last ({len(rungs) - 1}), "
                                f"got '{self.keep}'")
            early, cap = parse_numbers(self.early_keep, float, "early_keep"), parse_numbers(self.early_cap, int, "early_cap")
            if len(early) != len(keep) or len(cap) != len(keep) or not all(0 < e <= 1 for e in early) or min(cap) < 0:
                raise UserError(f"lcbo early_keep and early_cap need one share in (0, 1] and one count >= 0 per "
                                f"rung but the last ({len(keep)})")
            if self.min_points < 3 or self.refit_every < 1 or self.bags < 1 or self.oversample < 1 \
                    or self.score_cost_s < 0 or self.ridge < 0 or self.head_start < 0 or self.head_start_pool < 1 \
                    or self.report_every < 0 or self.promote_top < 0 or not 0 <= self.filter_share < 1 \
                    or not -len(rungs) <= self.head_start_rung < len(rungs):
                raise UserError("lcbo needs min_points >= 3, refit_every >= 1, bags >= 1, oversample >= 1, "
                                "score_cost_s >= 0, ridge >= 0, head_start >= 0, head_start_pool >= 1, report_every >= 0, "
                                "promote_top >= 0, filter_share in [0, 1) and a head_start_rung among the rungs")

    def check_table(self, search) -> None:
        levels = parse_numbers(self.settings.rungs, int, "rungs")
        if levels[-1] > search.max_epochs:
            raise UserError(f"lcbo's last rung ({levels[-1]} epochs) exceeds the benchmark's "
                            f"{search.max_epochs} epochs")

    def start(self, inputs: SearchInputs) -> None:
        s = self.settings
        self.check_table(inputs.search)
        self._levels = parse_numbers(s.rungs, int, "rungs")
        self._keep = parse_numbers(s.keep, float, "keep")
        self._early = list(zip(parse_numbers(s.early_keep, float, "early_keep"), parse_numbers(s.early_cap, int, "early_cap")))
        self._rng = inputs.rng
        n = inputs.search.n
        self._candidates = None
        if s.metric is not None and s.oversample > 1:
            from optimizers.training_free.candidates import ScoredCandidates

            self._candidates = ScoredCandidates(inputs, s.metric, s.higher_is_better, s.score_cost_s)
        else:
            self._order = iter(inputs.rng.permutation(n).tolist())
        self._head_start = []
        self._head_rows, self._head_next = set(), []     # head-start rows; those to continue now
        if s.head_start > 0 and self._candidates is not None:
            rows, overhead_s = self._candidates.take_best(s.head_start, max(s.head_start_pool, s.head_start))
            self._head_start = [(row, overhead_s if i == 0 else 0.0) for i, row in enumerate(rows)]
            self._head_rows = set(rows)
        self._static = self._static_inputs(inputs, n)
        # What the trial has paid for, per row: validation and training losses of epochs 1..len.
        self._val: dict[int, list] = {}
        self._train: dict[int, list] = {}
        self._level_of: dict[int, int] = {}         # row -> rung index of its running or last job
        levels = len(self._levels)
        self._members = [[] for _ in range(levels)]     # rows with a result at each rung, arrival order
        self._finite = [[] for _ in range(levels)]      # parallel: the result is finite (rankable)
        self._promoted = [np.zeros(0, dtype=bool) for _ in range(levels)]   # parallel to _members
        self._promoted_count = [0] * levels
        self._score = [np.empty(0) for _ in range(levels)]   # rank keys of _members (lower is better)
        self._inputs = [[] for _ in range(levels)]      # parallel: model inputs of the finite results
        self._models = [None] * levels
        self._fitted_on = [0] * levels
        self._leg_target: dict[int, int] = {}     # row -> epochs its promotion trains to, while in legs
        self._legs_next: list = []                 # rows whose next leg goes out at the next ask
        self._told = 0
        self._train_seen = False   # a finite training loss was observed (none on a table that records none)
        self.fits: list = []        # (rung, rows, input matrix, targets, jobs told before) of every fit (tests)
        self.decisions: list = []   # (row, rung, promoted?) of every job handed out

    def _static_inputs(self, inputs: SearchInputs, n: int):
        """Per-row model inputs that need no training, or None: the training-free score (0 where it is
        not finite) with a not-finite flag, and the features. Row by row, with no statistic over other
        cells, so a row's inputs hold nothing from scores the trial has not paid for (the model only
        reads rows it trained, all of them scored). The fit standardises its inputs itself."""
        s = self.settings
        columns = []
        if s.score_in_model and s.metric is not None and inputs.scores is not None:
            score = np.asarray(inputs.scores, dtype=float)
            finite = np.isfinite(score)
            columns += [np.where(finite, score, 0.0)[:, None], (~finite)[:, None].astype(float)]
        if s.features is not None:
            if inputs.features is None or inputs.features.shape[0] != n:
                raise UserError("lcbo needs a feature matrix with one row per architecture (setting 'features')")
            columns.append(np.asarray(inputs.features, dtype=float))
        return np.hstack(columns) if columns else None

    # -- the ask/tell loop ------------------------------------------------------------------------
    def ask(self) -> Job | None:
        if self._legs_next:              # a promotion trained in legs goes on at once
            return self._leg(self._legs_next.pop(0))
        if self._head_next:              # a head-start cell goes on to the last rung at once
            row = self._head_next.pop(0)
            k = self._level_of[row]
            return self._promote(k, self._members[k].index(row))
        if self._head_start:             # the best-scored cells of a large pool, trained deep first
            row, overhead_s = self._head_start.pop(0)
            k = self.settings.head_start_rung % len(self._levels)
            self._level_of[row] = k
            self.decisions.append((row, k, False))
            return Job(row, self._levels[k], overhead_s)
        for k in range(len(self._levels) - 2, -1, -1):
            position = self._promotable(k)
            if position is not None:
                return self._promote(k, position)
        row, overhead_s = self._new_architecture()
        if row is None:
            return self._promote_past_quota()
        k = self._first_rung(row)
        self._level_of[row] = k
        self.decisions.append((row, k, False))
        return Job(row, self._levels[k], overhead_s)

    def _first_rung(self, row: int) -> int:
        """The rung a new architecture trains to first (0: the first)."""
        return 0

    def tell(self, job: Job, observation) -> None:
        row = job.arch
        self._told += 1
        val, train = self._val.setdefault(row, []), self._train.setdefault(row, [])
        val.extend(float(v) for v in observation.val_loss)
        train.extend(float(v) for v in observation.train_loss)
        self._train_seen = self._train_seen or any(math.isfinite(v) for v in observation.train_loss)
        target = self._leg_target.get(row)
        if target is not None:
            if observation.status == "OK" and observation.epochs == job.epochs < target:
                self._legs_next.append(row)      # a leg of a longer promotion: not a rung result yet
                return
            del self._leg_target[row]
        k = self._level_of[row]
        finite = (observation.status == "OK" and observation.epochs == self._levels[k]
                  and len(val) == self._levels[k] and math.isfinite(val[-1])
                  and (math.isfinite(train[-1]) or not self._train_seen))   # a table without training losses (lora)
        self._members[k].append(row)
        self._finite[k].append(finite)
        key = math.inf
        if finite:
            x = self._curve_inputs(k, [row])
            self._inputs[k].append(x[0])
            key = self._rank_keys(k, [row], x)[0]
        self._score[k] = np.append(self._score[k], key)
        self._promoted[k] = np.append(self._promoted[k], False)
        if row in self._head_rows and finite and k < len(self._levels) - 1:
            self._head_next.append(row)
        if k > 0 and finite:
            self._maybe_refit(k - 1)

    def _new_architecture(self):
        if self._candidates is not None:
            if self.settings.filter_share:
                row, overhead_s = self._candidates.take_above(self.settings.filter_share, self.settings.oversample)
                if row is not None:
                    return row, overhead_s
                return self._candidates.take_passed_over(), overhead_s   # every cell scored: best score first
            rows, overhead_s = self._candidates.take_best(1, self.settings.oversample)
            if rows:
                return rows[0], overhead_s
            return self._candidates.take_passed_over(), 0.0   # every cell scored: the rest, best score first
        return next(self._order, None), 0.0

    def _promote_past_quota(self) -> Job | None:
        """Every cell has been started: the quotas no longer save budget for new cells, so promote the
        best not-yet-promoted finite result of the highest rung that has one (None if no rung has)."""
        for k in range(len(self._levels) - 2, -1, -1):
            scores = self._score[k]
            open_ = np.flatnonzero(~self._promoted[k] & np.isfinite(scores))
            if len(open_):
                return self._promote(k, int(open_[np.argsort(scores[open_], kind="stable")[0]]))
        return None

    def _promote(self, k: int, position: int) -> Job:
        """Promote the result at `position` of rung k to rung k + 1 (a job continuing its checkpoint)."""
        row = self._members[k][position]
        self._promoted[k][position] = True
        self._promoted_count[k] += 1
        self._level_of[row] = k + 1
        self.decisions.append((row, k + 1, True))
        if self.settings.report_every and self._levels[k + 1] - self._levels[k] > self.settings.report_every:
            self._leg_target[row] = self._levels[k + 1]
            return self._leg(row)
        return Job(row, self._levels[k + 1])

    def _leg(self, row: int) -> Job:
        """The next job of a promotion trained in legs: `report_every` more epochs, or up to its rung."""
        return Job(row, min(len(self._val[row]) + self.settings.report_every, self._leg_target[row]))

    def _promotable(self, k: int):
        """Position in rung k of its best not-yet-promoted finite result, if that ranks in the rung's
        top `keep` share (ties: the earlier result first), else None."""
        scores = self._score[k]
        quota = self._quota(k, len(scores))
        reach = quota if quota > self._promoted_count[k] else min(quota, self.settings.promote_top)
        if reach == 0:
            return None
        top = np.argsort(scores, kind="stable")[:reach]
        top = top[~self._promoted[k][top] & np.isfinite(scores[top])]
        return int(top[0]) if len(top) else None

    def _quota(self, k: int, n: int) -> int:
        """Promotions rung k allows with n results: the `keep` share, or while it is larger and under the
        cap, the `early_keep` share."""
        share, cap = self._early[k]
        return max(int(math.floor(n * self._keep[k])), min(int(math.floor(n * share)), cap))

    # -- the curve model --------------------------------------------------------------------------
    def _curve_inputs(self, k: int, rows) -> np.ndarray:
        """Model inputs of `rows` at rung k, from their paid curves up to the rung's epochs."""
        e = self._levels[k]
        block = np.empty((len(rows), 3))
        for i, row in enumerate(rows):
            val, train = self._val[row], self._train[row]
            trained = train[e - 1] if math.isfinite(train[e - 1]) else val[e - 1]   # no training loss recorded (lora)
            block[i] = (val[e - 1], val[e - 1] - val[e - 2] if e >= 2 else 0.0, trained)
        if self._static is not None:
            block = np.hstack([block, self._static[rows]])
        return block

    def _rank_keys(self, k: int, rows, inputs: np.ndarray) -> np.ndarray:
        """Rank keys of `rows` at rung k, whose model inputs are `inputs`."""
        model = self._models[k]
        if model is not None:
            mean, std = _predict(model, inputs)
            return mean - self.settings.beta * std
        e = self._levels[k]
        keys = np.empty(len(rows))
        for i, row in enumerate(rows):
            val = self._val[row]
            keys[i] = val[e - 1] + (self.settings.slope_weight * (val[e - 1] - val[e - 2]) if e >= 2 else 0.0)
        return keys

    def _clip_inputs(self) -> bool:
        """Whether the curve model predicts from inputs clipped to the range it was fit on (lcbo: no)."""
        return False

    def _maybe_refit(self, k: int) -> None:
        """Refit rung k's model on the rows that reached rung k+1 with a finite loss there."""
        s = self.settings
        if not s.model:
            return
        next_epochs = self._levels[k + 1]
        rows = [r for r, ok in zip(self._members[k + 1], self._finite[k + 1]) if ok]
        if len(rows) < s.min_points or len(rows) - self._fitted_on[k] < (s.refit_every if self._fitted_on[k] else 0):
            return
        x = self._curve_inputs(k, rows)
        y = np.array([self._val[r][next_epochs - 1] for r in rows])
        self._models[k] = _fit_bags(x, y, s.bags, s.ridge, self._rng, self._clip_inputs())
        self._fitted_on[k] = len(rows)
        self.fits.append((k, list(rows), x, y, self._told))
        members = self._members[k]
        finite = np.array(self._finite[k])
        keys = np.full(len(members), math.inf)
        if finite.any():
            keys[finite] = self._rank_keys(k, [m for m, ok in zip(members, finite) if ok], np.array(self._inputs[k]))
        self._score[k] = keys


def _fit_bags(x: np.ndarray, y: np.ndarray, bags: int, ridge: float, rng: np.random.Generator, clip: bool = False):
    """`bags` ridge regressions on bootstrap samples of standardised (x, y); with `clip`, predictions read
    inputs clipped to the range of `x`."""
    mean, spread = x.mean(axis=0), x.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    z = (x - mean) / spread
    n, d = z.shape
    weights = np.empty((bags, d + 1))
    for b in range(bags):
        pick = rng.integers(0, n, size=n)
        design = np.hstack([z[pick], np.ones((n, 1))])
        gram = design.T @ design + ridge * n * np.diag(np.r_[np.ones(d), 0.0])
        weights[b] = np.linalg.solve(gram + 1e-9 * np.eye(d + 1), design.T @ y[pick])
    bounds = (x.min(axis=0), x.max(axis=0)) if clip else None
    return mean, spread, weights, bounds


def _predict(model, x: np.ndarray):
    mean, spread, weights, bounds = model
    if bounds is not None:
        x = np.clip(x, *bounds)
    design = np.hstack([(x - mean) / spread, np.ones((len(x), 1))])
    predictions = design @ weights.T          # [n, bags]
    return predictions.mean(axis=1), predictions.std(axis=1)
