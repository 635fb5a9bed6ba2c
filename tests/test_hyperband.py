"""Hyperband on the real PTB data: bracket schedule, promotion of the best third, checkpoint costs."""
import math

import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from optimizers.multi_fidelity.hyperband import Rung, bracket_schedule
from optimizers.registry import make_algorithm

BUDGET_S = 2.5e5    # one full pass over the four brackets and part of a second


def run(ptb, seed, overrides=None, budget_s=BUDGET_S):
    env = Environment(ptb.search, budget_s)
    observations = []
    record = env.record

    def recording(*args):
        obs = record(*args)
        observations.append(obs)
        return obs

    env.record = recording
    assert run_on(env, make_algorithm("hb", overrides), seed, None).budget_spent
    return env, observations


def test_bracket_schedule_for_r50_eta3():
    # n = ceil((s_max+1)/(s+1) eta^s), r_i = floor(50 eta^(i-s)) in floating point (the release's rounding:
    # 50/27*27 = 49.999... -> 49), keep floor(n_i/eta).
    assert bracket_schedule(50, 3) == [
        [Rung(27, 1, 9), Rung(9, 5, 3), Rung(3, 16, 1), Rung(1, 49, 0)],
        [Rung(12, 5, 4), Rung(4, 16, 1), Rung(1, 50, 0)],
        [Rung(6, 16, 2), Rung(2, 49, 0)],
        [Rung(4, 50, 1)],
    ]
    # the released notebook's bracket budget B = N R / 3.5 with N = 100 iterations
    assert [b[0].n_configs for b in bracket_schedule(50, 3, 100 * 50 / 3.5)] == [193, 86, 43, 29]
    with pytest.raises(UserError):
        bracket_schedule(50, 1)


def val_loss_or_inf(obs):
    ok = obs.status == "OK" and obs.epochs == obs.requested_epochs and math.isfinite(obs.last_val_loss)
    return obs.last_val_loss if ok else math.inf


def replay(observations, schedule, worst=False):
    """Walk the calls through the bracket schedule, checking every rung's promotions; returns #rungs."""
    k, rungs_seen = 0, 0
    while k < len(observations):
        for rungs in schedule:
            configs = None
            for rung in rungs:
                calls = observations[k:k + (rung.n_configs if configs is None else len(configs))]
                if not calls:
                    return rungs_seen
                if configs is None:          # a new bracket: fresh architectures from scratch
                    configs = [o.arch for o in calls]
                    assert all(o.from_epoch == 0 for o in calls)
                assert [o.arch for o in calls] == configs[:len(calls)]
                assert all(o.requested_epochs == rung.epochs for o in calls)
                k += len(calls)
                rungs_seen += 1
                if len(calls) < len(configs):
                    return rungs_seen        # the budget ran out inside this rung
                losses = [val_loss_or_inf(o) for o in calls]
                finite = [j for j, loss in enumerate(losses) if math.isfinite(loss)]
                finite.sort(key=lambda j: -losses[j] if worst else losses[j])    # stable: ties by call order
                configs = [configs[j] for j in finite[:rung.keep]]
                if not configs:
                    break
    return rungs_seen


def test_rungs_promote_the_best_third_and_drop_failures(ptb):
    env, observations = run(ptb, seed=0)
    schedule = bracket_schedule(50, 3)
    assert replay(observations, schedule) > sum(len(b) for b in schedule) // 2
    first = observations[:27]
    assert [o.requested_epochs for o in first] == [1] * 27
    assert any(val_loss_or_inf(o) == math.inf for o in first)          # failures occur, and are dropped
    promoted = [o.arch for o in observations[27:36]]
    ranked = sorted((val_loss_or_inf(o), o.arch) for o in first)
    assert set(promoted) == {arch for loss, arch in ranked[:9] if math.isfinite(loss)}
    assert [o.requested_epochs for o in observations[27:27 + len(promoted)]] == [5] * len(promoted)


def test_promoted_models_pay_only_the_extra_epochs(ptb):
    env, observations = run(ptb, seed=1)
    reached = {}
    wall = np.nan_to_num(ptb.search.wall_time_s)
    for obs in observations:
        assert obs.from_epoch == reached.get(obs.arch, 0)
        assert obs.cost_s == pytest.approx(wall[obs.arch, obs.from_epoch:obs.epochs].sum(), rel=1e-12, abs=1e-9)
        reached[obs.arch] = obs.epochs
    assert any(o.from_epoch > 0 for o in observations)
    assert env.time_s == pytest.approx(sum(o.cost_s for o in observations))
    fresh = [o.arch for o in observations if o.from_epoch == 0]
    assert len(fresh) == len(set(fresh))                                  # drawn without replacement


def test_worst_mode_test_hook_promotes_the_worst(ptb):
    schedule = bracket_schedule(50, 3)
    _, worst = run(ptb, seed=0, overrides={"promote": "worst"})
    assert replay(worst, schedule, worst=True) > 4
    _, best = run(ptb, seed=0)
    assert [o.arch for o in worst[:27]] == [o.arch for o in best[:27]]   # same draws, other promotions
    assert {o.arch for o in worst[27:30]} != {o.arch for o in best[27:30]}
    first = [val_loss_or_inf(o) for o in best[:27]]
    finite = sorted(loss for loss in first if math.isfinite(loss))
    by_arch = {o.arch: val_loss_or_inf(o) for o in best[:27]}
    assert min(by_arch[o.arch] for o in worst[27:36]) >= finite[len(finite) - 9]
    with pytest.raises(UserError):
        run_on(Environment(ptb.search, BUDGET_S), make_algorithm("hb", {"promote": "median"}), 0, None)


def test_same_seed_same_trajectory(ptb):
    assert run(ptb, seed=5)[0].history == run(ptb, seed=5)[0].history
    assert run(ptb, seed=5)[0].history.arch != run(ptb, seed=6)[0].history.arch


def test_hb_release_is_the_release_notebooks_single_pass(ptb):
    """B = 100 R / 3.5, brackets drawn independently, the four brackets once: about 220 simulated hours."""
    schedule = bracket_schedule(50, 3, 100 * 50 / 3.5)
    assert [rungs[0].n_configs for rungs in schedule] == [193, 86, 43, 29]   # n = ceil(B/R eta^s/(s+1))
    env = Environment(ptb.search, 1000 * 3600.0)
    assert not run_on(env, make_algorithm("hb-release"), 0, None).budget_spent   # it stops by itself
    assert 200 * 3600 < env.time_s < 240 * 3600
    arch, epochs = np.asarray(env.history.arch), np.asarray(env.history.epochs)
    assert len(arch) <= sum(r.n_configs for rungs in schedule for r in rungs)
    assert len(set(arch[:193].tolist())) == 193 and (epochs[:193] == 1).all()   # bracket s=3's first rung
    assert len(set(arch.tolist())) < len(arch)          # later rungs continue them (and brackets may repeat)
    assert make_algorithm("hb").settings_dict() == {"max_epochs": 50, "eta": 3, "bracket_budget_epochs": None,
                                                    "promote": "best"}       # hb's own defaults unchanged
