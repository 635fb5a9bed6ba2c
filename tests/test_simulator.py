"""The ask/tell core on the real PTB data: one worker reproduces the trajectories recorded before the
port, and with K workers the simulator keeps its promises (one worker per architecture at a time,
exact continuation costs, a clock that never goes back, an incumbent that uses only ended jobs)."""
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.core.environment import Environment
from nasbench_cli.harness.simulator import ProtocolError, run_on
from nasbench_cli.harness.trial import run_algorithm
from optimizers.multi_fidelity.asha import ASHA, rung_levels
from optimizers.base import Algorithm, Job, SequentialAlgorithm
from optimizers.registry import make_algorithm
from no_test_table import NoTestTable
from port_fixture import CASES as PORT_CASES, inputs_for, load_fixture, replay_cases


def test_one_worker_trajectories_are_byte_identical_to_before_the_port(ptb):
    """All ten algorithms, 3 seeds each, at 1000 h (300 h for BO, TPE, SMAC; prs/phb also 200 h):
    trajectory and final simulated time equal, byte for byte, what the code before the ask/tell port
    recorded (tests/data/pre_port_trajectories.json.gz, made at commit 58627cc). In this process: the
    suite already runs one test per core, and two processes of its own would each import SMAC, XGBoost and
    hyperopt again (about 8 CPU s each)."""
    reference = load_fixture()["cases"]
    cases = replay_cases(PORT_CASES, str(ptb.data_dir))
    assert set(cases) == set(reference) and len(cases) == 36
    different = [key for key in cases if json.dumps(cases[key]) != json.dumps(reference[key])]
    assert not different


# -- K workers: the simulator's invariants -------------------------------------------------------

CASES = [("asha", 4, 300), ("ahb", 4, 300), ("hb", 4, 300), ("rs50e", 4, 300), ("re", 4, 300),
         ("bo10d", 4, 80), ("tpe", 3, 80), ("smac", 3, 60), ("prs", 4, 300), ("asha", 16, 100)]


@pytest.fixture(scope="module")
def parallel_runs(ptb):
    runs = {}
    for algo, workers, hours in CASES:
        feats, scores = inputs_for(ptb, algo)
        if algo == "prs":
            scores = scores.copy()
        env = Environment(NoTestTable(ptb.search), hours * 3600.0)
        end = run_on(env, make_algorithm(algo, {"score_cost_s": "30"} if algo == "prs" else None), 5, feats,
                     scores, workers)
        runs[(algo, workers)] = (env, end, hours * 3600.0)
    return runs


def jobs_of(env):
    h = env.history
    return [SimpleNamespace(start=s, end=e, arch=a, worker=w, first=f, reached=r, overhead=o)
            for s, e, a, w, f, r, o in zip(h.start_s, h.time_s, h.arch, h.worker, h.from_epoch, h.epochs,
                                           h.overhead_s)]


@pytest.mark.parametrize("case", CASES, ids=[f"{a}@{w}w" for a, w, _ in CASES])
def test_workers_run_side_by_side_and_stay_within_the_budget(parallel_runs, case):
    algo, workers, _ = case
    env, end, budget_s = parallel_runs[(algo, workers)]
    jobs = jobs_of(env)
    assert len(jobs) > 20 and end.jobs == len(jobs)
    assert {j.worker for j in jobs} == set(range(workers))
    assert all(0 <= j.start <= j.end <= budget_s for j in jobs)
    for worker in range(workers):                          # a worker runs one job at a time
        mine = sorted((j.start, j.end) for j in jobs if j.worker == worker)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(mine, mine[1:]))
    overlap = sum(1 for a, b in zip(jobs, jobs[1:]) if b.start < a.end)
    assert overlap > 0                                     # jobs really ran concurrently


@pytest.mark.parametrize("case", CASES, ids=[f"{a}@{w}w" for a, w, _ in CASES])
def test_no_architecture_is_trained_by_two_workers_at_once(parallel_runs, case):
    env, _, _ = parallel_runs[case[:2]]
    by_arch = {}
    for job in jobs_of(env):
        by_arch.setdefault(job.arch, []).append((job.start + job.overhead, job.end, job.first, job.reached))
    for spans in by_arch.values():
        spans.sort()
        for (_, end_a, _, reached_a), (start_b, _, first_b, _) in zip(spans, spans[1:]):
            assert end_a <= start_b                        # the next job starts after the last ended
            assert first_b == reached_a                    # and continues from its checkpoint
        assert spans[0][2] == 0


@pytest.mark.parametrize("case", CASES, ids=[f"{a}@{w}w" for a, w, _ in CASES])
def test_every_job_is_charged_exactly_its_continuation(parallel_runs, case, ptb):
    env, _, _ = parallel_runs[case[:2]]
    wall = ptb.search.wall_time_s
    for job in jobs_of(env):
        expected = float(np.sum(wall[job.arch, job.first:job.reached]))
        assert job.end - job.start - job.overhead == pytest.approx(expected, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[f"{a}@{w}w" for a, w, _ in CASES])
def test_the_clock_never_goes_back_and_the_incumbent_uses_only_ended_jobs(parallel_runs, case, ptb):
    env, _, _ = parallel_runs[case[:2]]
    h = env.history
    assert all(a <= b for a, b in zip(h.time_s, h.time_s[1:]))
    val = ptb.search.val_loss
    best = (math.inf, -1, 0)
    for k, job in enumerate(jobs_of(env)):
        # recompute the incumbent from the jobs ended so far (this one included), from scratch
        for epoch in range(job.first + 1, job.reached + 1):
            loss = float(val[job.arch, epoch - 1])
            if math.isfinite(loss) and (loss, job.arch, epoch) < best:
                best = (loss, job.arch, epoch)
        assert (h.incumbent[k], h.incumbent_epoch[k]) == (best[1], best[2])


def test_proxy_scoring_is_charged_as_job_overhead(parallel_runs):
    env, _, _ = parallel_runs[("prs", 4)]
    assert all(o == 30 * 10 for o in env.history.overhead_s)   # a pool of 10 scored per job


def test_hyperband_rungs_wait_for_every_job_of_the_previous_rung(parallel_runs):
    env, _, _ = parallel_runs[("hb", 4)]
    jobs = jobs_of(env)
    # bracket s=3 starts 27 new architectures at 1 epoch; the 9 promoted ones start after all 27 ended
    first_rung, second_rung = jobs[:27], jobs[27:36]
    assert all(j.reached == 1 and j.first == 0 for j in first_rung)
    assert min(j.start for j in second_rung) >= max(j.end for j in first_rung)
    idle = 4 * env.time_s - sum(j.end - j.start for j in jobs)
    assert idle > 0                                        # the barrier leaves workers idle


def test_more_workers_train_more_architectures_in_the_same_wall_clock(ptb):
    one = run_algorithm(ptb.search, "asha", 2, 200 * 3600.0, workers=1)
    four = run_algorithm(ptb.search, "asha", 2, 200 * 3600.0, workers=4)
    assert len(four.history.arch) > 3 * len(one.history.arch)


def test_same_seed_same_parallel_trajectory(ptb):
    feats, _ = inputs_for(ptb, "re")
    a = run_algorithm(ptb.search, "re", 9, 150 * 3600.0, features=feats, workers=4)
    b = run_algorithm(ptb.search, "re", 9, 150 * 3600.0, features=feats, workers=4)
    assert a.history == b.history


def test_tpe_engines_agree_with_pending_proposals(ptb):
    """With 3 workers, proposals are made while others are pending (+inf in both engines): hyperopt's
    own Trials with RUNNING docs and the fast engine propose the same points."""
    runs = []
    for engine in ("fast", "hyperopt"):
        algorithm = make_algorithm("tpe", {"engine": engine, "queue_len": "4", "n_startup_jobs": "6"})
        env = Environment(NoTestTable(ptb.search), 40 * 3600.0)
        run_on(env, algorithm, 7, ptb.search.shipped_features, None, 3)
        runs.append((env, algorithm))
    (fast_env, fast), (slow_env, slow) = runs
    assert len(fast.vectors) > 12
    assert np.array_equal(np.array(fast.vectors), np.array(slow.vectors))
    assert fast_env.history == slow_env.history


# -- the protocol --------------------------------------------------------------------------------

class Scripted(Algorithm):
    """Hands out the given jobs in order; records what it is told."""
    name = "scripted"

    def __init__(self, jobs):
        super().__init__()
        self.jobs, self.told = list(jobs), []

    def ask(self):
        return self.jobs.pop(0) if self.jobs else None

    def tell(self, job, observation):
        self.told.append((job.arch, observation.epochs, observation.time_s))


def test_asking_for_an_architecture_another_worker_is_training_is_a_protocol_error(ptb):
    env = Environment(ptb.search, 1e9)
    with pytest.raises(ProtocolError, match="while another worker is training it"):
        run_on(env, Scripted([Job(5, 10), Job(5, 20)]), 0, workers=2)
    env = Environment(ptb.search, 1e9)                      # one worker: the second continues the first
    run_on(env, Scripted([Job(5, 10), Job(5, 20)]), 0, workers=1)
    assert env.history.from_epoch == [0, 10] and env.history.epochs == [10, 20]


@pytest.mark.parametrize("job", [Job(-1, 5), Job(10**6, 5), Job(3, 0), Job(3, 51), Job(3, 5, -1.0),
                                 Job(3, 5, math.nan), Job(3.0, 5), "not a job"])
def test_malformed_jobs_are_protocol_errors(ptb, job):
    with pytest.raises(ProtocolError):
        run_on(Environment(ptb.search, 1e9), Scripted([job]), 0)


def test_a_job_that_would_end_after_the_budget_stops_only_its_worker(ptb):
    wall = ptb.search.wall_time_s
    short, full = float(wall[2, 0]), float(np.sum(wall[0, :50]))
    budget = short + full + 1.0                             # row 2 for 1 epoch, then row 0 for 50, fit
    long = int(np.argmax(np.nansum(wall[:, :50], axis=1)))
    assert np.nansum(wall[long, :50]) > budget
    env = Environment(ptb.search, budget)
    end = run_on(env, Scripted([Job(2, 1), Job(long, 50), Job(0, 50)]), 0, workers=2)
    assert end.stopped_by_budget == 1                       # worker 1 stopped at `long`, nothing charged
    assert env.history.arch == [2, 0] and env.history.worker == [0, 0]   # worker 0 went on
    assert env.time_s == pytest.approx(short + full)


def test_a_continuation_to_epochs_already_trained_is_free_and_told(ptb):
    env = Environment(ptb.search, 1e9)
    algorithm = Scripted([Job(7, 3), Job(7, 3)])
    run_on(env, algorithm, 0, workers=1)
    assert [t[1] for t in algorithm.told] == [3, 3] and env.history.time_s[0] == env.history.time_s[1]


def test_sequential_algorithm_batches_and_single_jobs(ptb):
    class Steps(SequentialAlgorithm):
        name = "steps"

        def search(self, inputs):
            observations = yield [Job(1, 2), Job(2, 2), Job(3, 2)]
            self.batch = [o.arch for o in observations]
            single = yield Job(1, 4)
            self.single = (single.arch, single.from_epoch, single.epochs)

    algorithm = Steps()
    env = Environment(ptb.search, 1e9)
    run_on(env, algorithm, 0, workers=3)
    assert algorithm.batch == [1, 2, 3] and algorithm.single == (1, 2, 4)
    assert sorted(env.history.worker[:3]) == [0, 1, 2]


# -- ASHA's promotion rule on a hand-made case -----------------------------------------------------

def observation(loss, epochs, status="OK"):
    return SimpleNamespace(last_val_loss=loss, epochs=epochs, status=status)


def test_asha_rung_levels_follow_grace_eta_and_r():
    assert rung_levels(1, 3, 50) == [1, 3, 9, 27, 50]
    assert rung_levels(3, 3, 50) == [3, 9, 27, 50]
    assert rung_levels(1, 4, 16) == [1, 4, 16]


def test_asha_promotes_the_best_unpromoted_result_once_it_is_in_the_top_third():
    asha = ASHA()
    asha.start(SimpleNamespace(search=SimpleNamespace(n=100), rng=np.random.default_rng(0)))
    a, b, c = (asha.ask() for _ in range(3))
    assert all(job.epochs == 1 for job in (a, b, c)) and len({a.arch, b.arch, c.arch}) == 3
    asha.tell(a, observation(5.0, 1))
    d = asha.ask()                                          # 1 result: floor(1/3) = 0 promotable
    assert d.epochs == 1 and d.arch not in {a.arch, b.arch, c.arch}
    asha.tell(b, observation(4.0, 1))
    asha.tell(c, observation(6.0, 1))
    promoted = asha.ask()                                   # 3 results: the best one (b) goes to 3 epochs
    assert (promoted.arch, promoted.epochs) == (b.arch, 3)
    asha.tell(d, observation(3.0, 1))                       # 4 results: top 1 is d, not yet promoted
    promoted_d = asha.ask()
    assert (promoted_d.arch, promoted_d.epochs) == (d.arch, 3)
    e = asha.ask()                                          # top 1 (d) is promoted: start a new one
    assert e.epochs == 1
    asha.tell(e, observation(3.5, 1))
    f = asha.ask()                                          # 5 results, top 1 = d: still nothing
    assert f.epochs == 1
    asha.tell(f, observation(math.nan, 1))                  # diverged: ranks last, never promoted
    promoted_e = asha.ask()                                 # 6 results: top 2 = d, e -> e
    assert (promoted_e.arch, promoted_e.epochs) == (e.arch, 3)
    # rung 1 (3 epochs): b, d, e arrive; the best of 3 goes on to 9 epochs, before any rung-0 work
    asha.tell(promoted, observation(3.9, 3))
    asha.tell(promoted_d, observation(2.9, 3))
    asha.tell(promoted_e, observation(3.1, 3, status="loss is nan!"))   # failed at rung 1: inf
    top = asha.ask()
    assert (top.arch, top.epochs) == (d.arch, 9)


def test_asha_breaks_ties_by_arrival_and_reaches_r_at_the_top():
    asha = ASHA(ASHA.Settings(max_epochs=9, eta=3, grace_epochs=1))
    asha.start(SimpleNamespace(search=SimpleNamespace(n=50), rng=np.random.default_rng(1)))
    jobs = [asha.ask() for _ in range(3)]
    for job in jobs:
        asha.tell(job, observation(2.0, 1))                 # a three-way tie: the first told wins
    promoted = asha.ask()
    assert (promoted.arch, promoted.epochs) == (jobs[0].arch, 3)
    assert rung_levels(1, 3, 9) == [1, 3, 9]


def test_ahb_draws_brackets_as_syne_tune_does():
    from optimizers.multi_fidelity.asha import bracket_probabilities

    p = bracket_probabilities([1, 3, 9, 27, 50], 4)
    raw = np.array([5 / (5 * 1), 5 / (4 * 3), 5 / (3 * 9), 5 / (2 * 27)])
    assert np.allclose(p, raw / raw.sum())
    ahb = make_algorithm("ahb")
    ahb.start(SimpleNamespace(search=SimpleNamespace(n=5000), rng=np.random.default_rng(0)))
    first_epochs = [ahb.ask().epochs for _ in range(4000)]
    shares = np.array([first_epochs.count(e) for e in (1, 3, 9, 27)]) / 4000
    assert np.allclose(shares, p, atol=0.03)
