"""lcbo on the real PTB table: its fairness rules, quotas, scoring charges and the passed-over reserve."""
import dataclasses
import math

import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on, simulate
from optimizers.base import SearchInputs
from optimizers.registry import make_algorithm
from test_proxy_search import scores_for


def run(ptb, scores, budget_h=150, seed=3, workers=1, **overrides):
    env = Environment(ptb.search, budget_h * 3600)
    algorithm = make_algorithm("lcbo", {k: str(v) for k, v in overrides.items()})
    run_on(env, algorithm, seed, None, scores, workers)
    return env, algorithm


def paid_epochs_before(env, end_index):
    """Epochs each row had been trained to after the first `end_index` finished jobs."""
    paid = {}
    for arch, epochs in zip(env.history.arch[:end_index], env.history.epochs[:end_index]):
        paid[arch] = max(paid.get(arch, 0), epochs)
    return paid


def test_the_model_learns_only_from_epochs_the_trial_paid_for(ptb):
    """Same seed, a searcher's table whose losses are all NaN: identical decisions (the algorithm reads
    losses only from its own observations), and every fit's inputs and targets are paid epochs."""
    scores = scores_for(ptb)
    env, algorithm = run(ptb, scores, budget_h=150, min_points=10)
    assert algorithm.fits and {k for k, *_ in algorithm.fits} >= {0, 1}

    blind = dataclasses.replace(ptb.search, val_loss=np.full_like(ptb.search.val_loss, np.nan),
                                train_loss=np.full_like(ptb.search.train_loss, np.nan))
    other = make_algorithm("lcbo", {"min_points": "10"})
    env_blind = Environment(ptb.search, 150 * 3600)
    simulate(other, env_blind, SearchInputs(search=blind, rng=np.random.default_rng(3), seed=3, features=None,
                                            scores=scores))
    assert other.decisions == algorithm.decisions and env_blind.history.arch == env.history.arch

    levels = [1, 2, 9, 50]
    for k, rows, x, y, told in algorithm.fits:
        paid = paid_epochs_before(env, told)     # one worker: jobs are told in the order they end
        assert all(paid.get(r, 0) >= levels[k + 1] for r in rows)
        np.testing.assert_array_equal(x[:, 0], ptb.search.val_loss[rows, levels[k] - 1])
        np.testing.assert_array_equal(y, ptb.search.val_loss[rows, levels[k + 1] - 1])


def test_scores_of_cells_not_yet_drawn_change_nothing(ptb):
    """The scores are read only for the candidates a trial has paid to score."""
    scores = scores_for(ptb)
    env, algorithm = run(ptb, scores, budget_h=50, min_points=10, oversample=3)
    assert algorithm.fits
    drawn = set(algorithm._candidates.order[:algorithm._candidates.position])
    other = scores.copy()
    undrawn = [r for r in np.flatnonzero(np.isfinite(scores)) if r not in drawn]
    assert len(undrawn) > 100
    other[undrawn] = np.random.default_rng(9).normal(size=len(undrawn)) * 1e3
    _, again = run(ptb, other, budget_h=50, min_points=10, oversample=3)
    assert again.decisions == algorithm.decisions


def test_promotions_respect_each_rungs_quota_and_new_cells_pay_for_scoring(ptb):
    scores = scores_for(ptb)
    env, algorithm = run(ptb, scores, budget_h=200, score_cost_s=7, oversample=3, early_cap="0,0,0", promote_top=0)
    keep = [0.2, 0.05, 0.333]
    started = [0, 0, 0, 0]
    for row, rung, promoted in algorithm.decisions:
        started[rung] += 1
    assert started[0] > 500 and started[1] > 0 and started[2] > 0
    for k in range(3):       # never more promotions than the quota of the results at the time
        assert started[k + 1] <= math.floor(started[k] * keep[k]) + 1
    # each new cell is the best-scored of a fresh pool of 3 scored candidates, charged 3 x 7 s
    new = [row for row, rung, promoted in algorithm.decisions if rung == 0]
    universe = np.flatnonzero(np.isfinite(scores))
    order = universe[np.random.default_rng(3).permutation(len(universe))]
    for j, row in enumerate(new[:200]):
        pool = order[3 * j:3 * j + 3]
        assert row == pool[np.argmax(scores[pool])]
    pools = min(len(new), len(universe) // 3)          # then the passed-over cells, already scored
    assert sum(env.history.overhead_s) == pytest.approx(7 * 3 * pools)


def test_early_quotas_promote_sooner_and_stop_at_their_caps(ptb):
    scores = scores_for(ptb)
    keep, early, cap = [0.2, 0.05, 0.333], [0.333, 0.2, 0.333], [40, 8, 3]
    env, algorithm = run(ptb, scores, budget_h=150, promote_top=0)     # the quotas alone
    results, promoted, first_at = [0, 0, 0, 0], [0, 0, 0, 0], {}
    for row, rung, was_promoted in algorithm.decisions:      # one worker: each job is told before the next ask
        if was_promoted:
            k = rung - 1
            promoted[rung] += 1
            first_at.setdefault(rung, results[k])
            allowed = max(math.floor(results[k] * keep[k]), min(math.floor(results[k] * early[k]), cap[k]))
            assert promoted[rung] <= allowed
        results[rung] += 1
    # the first 9-epoch job starts after 5 two-epoch results, not the 20 that keep's 1/20 needs (and the
    # first 2-epoch one after 4 one-epoch results: floor(3 x 0.333) is 0)
    assert first_at[2] == 5 and first_at[1] == 4 and promoted[3] >= 3
    baseline, _ = run(ptb, scores, budget_h=150, early_cap="0,0,0")     # keep's shares alone
    assert len(env.history.arch) != len(baseline.history.arch) or env.history.arch != baseline.history.arch


def test_a_rungs_best_result_goes_on_even_when_its_promotions_are_used_up(ptb):
    """promote_top=1 (the default): a promotion beyond a rung's count quota is only ever of the rung's best
    result (by rank key), and a new cell never starts while a rung's best result waits. Replayed from the
    table with the fallback rank (model=False: last + (last - previous), known without the trial's state)."""
    scores = scores_for(ptb)
    _, algorithm = run(ptb, scores, budget_h=150, model=False)
    levels, keep, early, cap = [1, 2, 9, 50], [0.2, 0.05, 0.333], [0.333, 0.2, 0.333], [40, 8, 3]
    val, train = ptb.search.val_loss, ptb.search.train_loss

    def key(row, k):
        e = levels[k]
        if not (np.isfinite(val[row, :e]).all() and np.isfinite(train[row, e - 1])):
            return math.inf
        return val[row, e - 1] + (val[row, e - 1] - val[row, e - 2] if e >= 2 else 0.0)

    keys = [[] for _ in levels]          # rank keys of each rung's results, arrival order
    promoted = [set() for _ in levels]   # their positions promoted so far
    beyond = 0

    def ranked(k):
        n = len(keys[k])
        quota = max(math.floor(n * keep[k]), min(math.floor(n * early[k]), cap[k]))
        return [i for i in sorted(range(n), key=lambda i: keys[k][i]) if math.isfinite(keys[k][i])], quota

    for row, rung, was_promoted in algorithm.decisions:     # one worker: each job is told before the next ask
        if was_promoted:
            k = rung - 1
            order, quota = ranked(k)
            position = next(i for i in order if i not in promoted[k])
            assert keys[k][position] == key(row, k) and position in order[:quota]
            if len(promoted[k]) >= quota:
                assert position == order[0]
                beyond += 1
            promoted[k].add(position)
        else:
            for k in range(len(levels) - 1):
                order, quota = ranked(k)
                assert not order or quota == 0 or order[0] in promoted[k]
        keys[rung].append(key(row, rung))
    assert beyond > 0
    _, quotas_only = run(ptb, scores, budget_h=150, model=False, promote_top=0)
    assert quotas_only.decisions != algorithm.decisions


def test_promotions_train_in_reported_legs_with_the_same_decisions(ptb):
    """report_every=4: a promotion over more than 4 epochs runs as jobs of at most 4 epochs that go out
    back to back, so the incumbent sees the epochs sooner; one worker makes the same decisions and trains
    the same epochs as one job per promotion (report_every=0), ending with the same incumbent."""
    scores = scores_for(ptb)
    legs, with_legs = run(ptb, scores, budget_h=150)
    whole, without = run(ptb, scores, budget_h=150, report_every=0)
    assert with_legs.decisions == without.decisions
    assert legs.history.incumbent[-1] == whole.history.incumbent[-1]
    assert any(b - a > 4 for a, b in zip(whole.history.from_epoch, whole.history.epochs))
    assert all(b - a <= 4 for a, b in zip(legs.history.from_epoch, legs.history.epochs))
    assert len(legs.history.arch) > len(whole.history.arch)

    def trained(env):
        return {arch: epochs for arch, epochs in zip(env.history.arch, env.history.epochs)}

    assert trained(legs) == trained(whole)
    # the legs of one promotion follow each other with nothing in between (one worker)
    for i in range(1, len(legs.history.arch)):
        if legs.history.from_epoch[i] not in (0, 1, 2, 9):
            assert legs.history.arch[i] == legs.history.arch[i - 1]
            assert legs.history.from_epoch[i] == legs.history.epochs[i - 1]
    # sooner, never later: at every job end of the whole-job run, the legs run's incumbent (as of its
    # last job end by then) is at least as good by validation log-perplexity
    def best_val(env, i):
        arch, epoch = env.history.incumbent[i], env.history.incumbent_epoch[i]
        return env._index.prefix_best_val.item(arch, epoch) if arch >= 0 else math.inf

    ends = np.searchsorted(np.array(legs.history.time_s), np.array(whole.history.time_s), side="right") - 1
    assert all(best_val(legs, e) <= best_val(whole, i) for i, e in enumerate(ends))
    back = np.searchsorted(np.array(whole.history.time_s), np.array(legs.history.time_s), side="right") - 1
    assert any(best_val(legs, i) < (best_val(whole, e) if e >= 0 else math.inf) for i, e in enumerate(back))


def test_once_every_cell_is_scored_the_passed_over_ones_start_best_first(ptb):
    scores = scores_for(ptb, n_scored=60)
    env, algorithm = run(ptb, scores, budget_h=150, oversample=3)
    new = [row for row, rung, promoted in algorithm.decisions if rung == 0]
    assert sorted(new) == sorted(np.flatnonzero(np.isfinite(scores)).tolist())   # all 60, once each
    reserve = new[20:]                    # 20 pools of 3, then the 40 passed over, best score first
    assert scores[reserve].tolist() == sorted(scores[reserve], reverse=True)
    assert sum(env.history.overhead_s) == pytest.approx(2.0 * 60)


def test_four_workers_run_and_the_same_seed_repeats(ptb):
    scores = scores_for(ptb)
    first, _ = run(ptb, scores, budget_h=80, workers=4)
    again, _ = run(ptb, scores, budget_h=80, workers=4)
    assert first.history.arch == again.history.arch and len(first.history.arch) > 100


@pytest.mark.parametrize("overrides", [{"rungs": "1,9,2"}, {"keep": "0.5"}, {"keep": "0.2,0,0.3"},
                                       {"rungs": "1,x"}, {"min_points": "1"},
                                       {"early_cap": "4,-1,2"}, {"early_keep": "0.3,0.2", "early_cap": "4,2"},
                                       {"early_keep": "0.3,0.2,1.5", "early_cap": "4,2,1"},
                                       {"report_every": "-1"}, {"promote_top": "-1"},
                                       {"filter_share": "1"}, {"filter_share": "-0.1"}])
def test_bad_settings_are_one_line_errors(overrides):
    with pytest.raises(UserError):
        make_algorithm("lcbo", overrides)
    if "filter_share" not in overrides:
        return
    with pytest.raises(UserError, match="mo-lcbo has no filter_share"):
        make_algorithm("mo-lcbo", {"filter_share": "0.1"})


def test_filter_share_starts_new_cells_from_the_top_share_and_pays_for_every_score(ptb):
    """filter_share=0.1 (tried, not the default): each new cell is the first candidate, in the trial's
    random order, that ranks in the top 10% of the scores seen so far; each score costs score_cost_s."""
    scores = scores_for(ptb, n_scored=8000)
    env, algorithm = run(ptb, scores, budget_h=20, filter_share=0.1, score_cost_s=5)
    new = [(row, k) for row, k, promoted in algorithm.decisions if not promoted]
    assert len(new) > 30
    order = algorithm._candidates.order
    position = {row: i for i, row in enumerate(order)}
    key = -scores
    for row, _ in new[1:]:           # the first is the best of the first pool of `oversample` (16)
        seen = key[order[:position[row] + 1]]
        assert (seen < key[row]).sum() < 0.1 * len(seen)
    last = position[new[-1][0]]
    skipped = [r for r in order[16:last] if r not in {row for row, _ in new}]
    assert skipped and all((key[order[:position[r] + 1]] < key[r]).sum() >= int(0.1 * (position[r] + 1))
                           for r in skipped)
    assert len(order) - last > 1000                    # the universe was not used up
    scored_before_last_start = last + 1 - sum(1 for r in order[:last + 1] if r not in algorithm._candidates.passed_over
                                              and r not in {row for row, _ in new})
    assert scored_before_last_start == last + 1        # every candidate up to the last start was scored...
    ended = max(position[row] for row, _ in new if row in set(env.history.arch))   # jobs still running at the
    assert sum(env.history.overhead_s) == pytest.approx(5 * (ended + 1))            # end are not in the history
    default, _ = run(ptb, scores, budget_h=20, score_cost_s=5)
    assert env.history.arch != default.history.arch


def test_no_scores_is_a_one_line_error_and_metric_none_is_uniform(ptb):
    with pytest.raises(UserError, match="proxies build"):
        run(ptb, None, budget_h=10)
    env, algorithm = run(ptb, None, budget_h=30, metric="None")
    assert sum(env.history.overhead_s) == 0 and len(env.history.arch) > 50


def test_clipped_inputs_keep_the_curve_model_from_extrapolating_a_score(ptb):
    """The hidden-covariance score is heavy-tailed (PTB: -1.2e7 to -2.6e4) and the cells a rung's model
    is fit on can span a narrow band of it. Fit on the 80 cells best by 9-epoch validation among those
    scoring above -2e5, the unclipped model predicts the GRU cell (1000002, score -3.5e6, a median score)
    to end 50 epochs far worse than it already is at 9; with clipping (`mo-lcbo`'s `clip_inputs`) it
    reads the score at the band's edge and predicts within the fit's targets, close to the GRU's
    recorded 50-epoch loss."""
    from nasbench_cli.harness.trial import load_scores
    from optimizers.training_free.lcbo import _fit_bags, _predict

    search = ptb.search
    scores = load_scores(ptb, "hidden_covariance_l1", "train")
    gru = search.index_of(1000002)
    complete = np.isfinite(search.val_loss[:, 49]) & np.isfinite(scores)
    band = np.flatnonzero(complete & (scores > -2e5))
    rows = band[np.argsort(search.val_loss[band, 8], kind="stable")[:80]]

    def inputs(r):
        return np.column_stack([search.val_loss[r, 8], search.val_loss[r, 8] - search.val_loss[r, 7],
                                search.train_loss[r, 8], scores[r], np.zeros(len(r))])

    x, y = inputs(rows), search.val_loss[rows, 49]
    assert scores[gru] < x[:, 3].min() - 1e6
    plain, _ = _predict(_fit_bags(x, y, 10, 1e-3, np.random.default_rng(0)), inputs(np.array([gru])))
    clipped, _ = _predict(_fit_bags(x, y, 10, 1e-3, np.random.default_rng(0), clip=True), inputs(np.array([gru])))
    assert plain[0] > search.val_loss[gru, 8] + 0.3
    assert y.min() <= clipped[0] <= y.max() and abs(clipped[0] - search.val_loss[gru, 49]) < 0.1
    edge = np.clip(inputs(np.array([gru])), x.min(axis=0), x.max(axis=0))
    model = _fit_bags(x, y, 10, 1e-3, np.random.default_rng(0), clip=True)
    assert _predict(model, inputs(np.array([gru])))[0][0] == _predict(model, edge)[0][0]
