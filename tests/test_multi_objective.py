"""Multi-objective and constrained search (issue 26) on the real PTB and NAS-Bench-BERT data."""
import importlib.util
import itertools
import json
import sys

import numpy as np
import pytest

import cli_process

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("moocore") is None, reason="moocore not installed")

from benchmarks.core.constraints import parse_constraints  # noqa: E402
from benchmarks.core.front_regret import front_trajectory  # noqa: E402
from benchmarks.core.pareto import hypervolume, objective_space  # noqa: E402


def cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True)


# -- hypervolume against an independent brute force ------------------------------------------------------------

def brute_force_hv(points: np.ndarray, reference: np.ndarray) -> float:
    """Volume of the union of the boxes [p, reference] by coordinate compression: every grid cell
    between consecutive coordinates is in the union if some point is below its lower corner."""
    points = points[(points < reference).all(axis=1)]
    if not len(points):
        return 0.0
    axes = [np.unique(np.concatenate([points[:, d], [reference[d]]])) for d in range(points.shape[1])]
    total = 0.0
    for cell in itertools.product(*[range(len(a) - 1) for a in axes]):
        lower = np.array([axes[d][i] for d, i in enumerate(cell)])
        upper = np.array([axes[d][i + 1] for d, i in enumerate(cell)])
        if (points <= lower).all(axis=1).any():
            total += float(np.prod(upper - lower))
    return total


@pytest.mark.parametrize("dims", [2, 3])
def test_hypervolume_matches_brute_force(dims):
    rng = np.random.default_rng(dims)
    for _ in range(20):
        points = rng.random((rng.integers(1, 12), dims)) * 1.2     # some beyond the reference point
        reference = np.full(dims, 1.1)
        assert hypervolume(points, reference) == pytest.approx(brute_force_hv(points, reference), rel=1e-12, abs=1e-14)


# -- the true front on ptb -------------------------------------------------------------------------------------

def test_true_front_is_the_nondominated_set_of_best_test_points(ptb):
    space = objective_space(ptb, ("logppl", "params", "epoch_s"))
    test = np.where(np.isfinite(ptb.test_loss), ptb.test_loss, np.inf).min(axis=1)
    points = space.static.copy()
    points[:, 0] = test
    ok = np.isfinite(points).all(axis=1)
    rows = np.flatnonzero(ok)
    p = points[rows]
    claimed = np.isin(rows, space.front_rows)
    assert claimed.sum() == len(space.front_rows)        # every front row is a cell with finite objectives

    def dominates(a, b):
        return (a <= b).all(axis=-1) & (a < b).any(axis=-1)

    # by the definition, against every point: no point dominates a front point, and every other point is
    # dominated by one (a dominated point always is, by a non-dominated one), so the front is exactly the
    # non-dominated set
    front = p[claimed]
    assert not dominates(p[:, None, :], front[None, :, :]).any()
    assert dominates(front[None, :, :], p[~claimed][:, None, :]).any(axis=1).all()
    assert ptb.best_index in space.front_rows.tolist()          # L*'s cell is the loss end of the front
    assert np.allclose(space.lower, front.min(axis=0)) and np.allclose(space.upper, front.max(axis=0))


# -- a trial's front and its hypervolume regret ----------------------------------------------------------------

def naive_curve(benchmark, space, rows, reached):
    """Recompute the trial's front from scratch after every job (no incremental state)."""
    from benchmarks.core.environment import _prefix_index

    index = _prefix_index(benchmark.search)
    point_of, curve = {}, []
    for row, r in zip(rows, reached):
        loss = index.prefix_best_val[row, r]
        if np.isfinite(loss):
            point_of[int(row)] = (loss, int(index.prefix_best_epoch[row, r]))
        cands = [(row_, e, np.r_[space.static[row_, :space.loss_column], loss_,
                                 space.static[row_, space.loss_column + 1:]])
                 for row_, (loss_, e) in sorted(point_of.items())
                 if space.feasible[row_] and space.loss_feasible(loss_)]
        front = []
        for row_, e, v in cands:
            beaten = any((w <= v).all() and ((w < v).any() or r2 < row_) for r2, _, w in cands if r2 != row_)
            if not beaten:
                front.append((row_, e, v))
        if not front:
            curve.append(None)
            continue
        scored = np.array([v for _, _, v in front])
        scored[:, space.loss_column] = [benchmark.test_loss[row_, e - 1] for row_, e, _ in front]
        scored = scored[space.loss_feasible(scored[:, space.loss_column])]
        curve.append(space.true_hv - hypervolume(space.normalise(scored), space.reference))
    return curve


@pytest.fixture(scope="module")
def hb_jobs(ptb):
    from nasbench_cli.harness.trial import run_trial

    record = run_trial("ptb", "hb", 0, 0, 150 * 3600.0)     # 344 jobs; the front improves 6 to 19 times
    traj = record["trajectory"]
    return record, ptb.search.indices_of(traj["arch"]), traj["epochs"]


@pytest.mark.parametrize("objectives", [("logppl", "params"), ("logppl", "params", "epoch_s"), ("logppl", "flops")])
def test_incremental_hv_regret_equals_a_naive_recompute(ptb, hb_jobs, objectives):
    _, rows, reached = hb_jobs
    space = objective_space(ptb, objectives)
    fast = front_trajectory(ptb, space, rows, reached)["regret"]
    slow = naive_curve(ptb, space, rows, reached)
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow):
        assert (a is None and b is None) or a == pytest.approx(b, abs=1e-12)
    assert all(r is None or r >= 0 for r in fast)
    assert fast[-1] < fast[next(k for k, r in enumerate(fast) if r is not None)]      # it improves


def test_a_vacuous_constraint_gives_the_unconstrained_trajectory(ptb, hb_jobs):
    record, rows, reached = hb_jobs
    space = objective_space(ptb, ("logppl",), parse_constraints(["params<=1e12"], "ptb"))
    out = front_trajectory(ptb, space, rows, reached)
    assert out["regret"] == record["trajectory"]["regret"]
    assert out["l_star"] == ptb.l_star


def test_constrained_regret_is_against_the_best_feasible_architecture(ptb):
    from nasbench_cli.harness.trial import run_trial

    record = run_trial("ptb", "rs50e", 0, 0, 1000 * 3600.0, constraints=["params<=7e6"])
    params = ptb.search.num_params
    feasible = params <= 7e6
    best = np.where(np.isfinite(ptb.test_loss), ptb.test_loss, np.inf)[feasible].min()
    assert record["l_star"] == best > ptb.l_star
    assert params[ptb.search.index_of(record["benchmark_best_arch"])] <= 7e6
    traj = record["trajectory"]
    for inc, epoch, regret in zip(traj["incumbent"], traj["incumbent_epoch"], traj["regret"]):
        if inc is not None:
            row = ptb.search.index_of(inc)
            assert params[row] <= 7e6                                  # infeasible finds never count
            assert regret == ptb.test_loss[row, epoch - 1] - best


def test_a_constrained_run_needs_no_moocore_and_one_objective_fronts_match_it(ptb, monkeypatch):
    """A constrained single-objective run has one objective: its front is the minima and its hypervolume a
    length, computed without moocore (the `mo` extra, which such a run used to demand as "multi-objective
    runs need moocore") and equal, to the bit, to what moocore gives (ties and points beyond the reference
    included)."""
    import moocore

    import benchmarks.core.pareto as pareto
    from benchmarks.core.errors import UserError
    from nasbench_cli.harness.trial import run_trial

    rng = np.random.default_rng(0)
    for _ in range(500):
        x = np.round(rng.uniform(-1, 2, size=(int(rng.integers(1, 30)), 1)), int(rng.integers(0, 4)))
        ref = [float(rng.choice([-2.0, 0.5, 1.1, 2.5]))]
        assert np.array_equal(pareto.nondominated(x), np.asarray(moocore.is_nondominated(x, keep_weakly=True), bool))
        assert pareto.hypervolume(x, ref) == float(moocore.hypervolume(x, ref=np.asarray(ref)))

    def missing():
        raise UserError("multi-objective runs need moocore")

    monkeypatch.setattr(pareto, "require_moocore", missing)
    monkeypatch.setattr(pareto, "_SPACES", {})            # objective spaces are memoised: build them again
    record = run_trial("ptb", "rs50e", 0, 0, 1000 * 3600.0, constraints=["params<=7e6"])
    best = np.where(np.isfinite(ptb.test_loss), ptb.test_loss, np.inf)[ptb.search.num_params <= 7e6].min()
    assert record["l_star"] == best and record["final_regret"] is not None
    with pytest.raises(UserError, match="moocore"):        # two objectives still need it
        objective_space(ptb, ("logppl", "params"))


# -- FLOPs against torch's own counter -----------------------------------------------------------------------

def test_cell_flops_match_torch_flop_counter(ptb):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from benchmarks.cells.baseline_cells import BASELINES
    from benchmarks.cells.flops import cell_flops
    from benchmarks.proxies.network import RecipeLanguageModel

    rng = np.random.default_rng(0)
    recipes = [ptb.search.recipe(int(r)) for r in rng.choice(ptb.search.n, 30, replace=False)]
    recipes += [build() for build, _ in BASELINES.values()]     # rnn, lstm, gru as the release writes them
    assert len(recipes) == 33
    steps = 3
    for recipe in recipes:
        with torch.device("meta"):    # shapes only: the counter reads the ops' shapes, not their values (5x cheaper)
            model = RecipeLanguageModel(recipe, vocab_size=20)
            inputs = torch.zeros(steps, 1, 400)
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(inputs)
        assert counter.get_total_flops() == steps * cell_flops(recipe)


# -- the command line ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["--objectives", "logppl,foo"], "unknown objective 'foo'"),
    (["--objectives", "logppl,glue"], "has no objective 'glue'"),
    (["--objectives", "params"], "--constraint"),
    (["--objectives", "params,flops"], "must include 'logppl'"),
    (["--objectives", "logppl,params,flops,epoch_s"], "two or three"),
    (["--constraint", "params=<3"], "malformed constraint"),
    (["--constraint", "params<=abc"], "is not a number"),
    (["--constraint", "params<=1"], "loosen the constraint"),
    (["--constraint", "params<=inf"], "finite"),
])
def test_bad_objectives_and_constraints_are_one_line(tmp_path, args, words):
    run = cli("run", "--algo", "rs50e", "--trials", "1", "--out", tmp_path, *args)
    assert run.returncode == 2 and words in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_a_multi_objective_algorithm_needs_objectives(tmp_path):
    run = cli("run", "--algo", "mo-re", "--trials", "1", "--out", tmp_path)
    assert run.returncode == 2 and "multi-objective algorithm" in run.stderr and "Traceback" not in run.stderr


@pytest.fixture(scope="module")
def mo_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("mo")
    for workers in (1, 4):
        run = cli("run", "--algo", "mo", "--objectives", "logppl,params", "--trials", "1",
                  "--budget-hours", "10", "--workers", workers, "--out", out)
        assert run.returncode == 0, run.stderr
    return out


def test_every_multi_objective_algorithm_runs_and_records_its_front(mo_results, ptb):
    labels = sorted(p.name for p in (mo_results / "ptb").iterdir() if p.is_dir())
    names = ["mo-rs", "mo-asha", "mo-re", "parego", "nsga2", "motpe", "mo-lcbo"]
    assert labels == sorted(names + [f"{n}@4w" for n in names])
    space = objective_space(ptb, ("logppl", "params"))
    for path in (mo_results / "ptb").glob("*/trial-*.json"):
        record = json.loads(path.read_text())
        assert record["objectives"] == ["logppl", "params"]
        assert record["hv_space"]["true_hv"] == space.true_hv
        assert record["front"], path
        # anyone can recompute the final HV regret from the recorded front and hv_space
        rows = ptb.search.indices_of([a for a, _ in record["front"]])
        points = np.c_[ptb.test_loss[rows, [e - 1 for _, e in record["front"]]], ptb.search.num_params[rows]]
        normalised = (points - record["hv_space"]["lower"]) / (np.array(record["hv_space"]["upper"]) -
                                                               record["hv_space"]["lower"])
        expected = record["hv_space"]["true_hv"] - hypervolume(normalised, record["hv_space"]["reference"])
        assert record["final_regret"] == pytest.approx(expected, abs=1e-12)


def test_multi_objective_results_do_not_depend_on_jobs(mo_results, tmp_path):
    run = cli("run", "--algo", "mo-asha,nsga2", "--objectives", "logppl,params", "--trials", "1",
              "--budget-hours", "10", "--workers", "4", "--jobs", "2", "--out", tmp_path)   # the fixture ran one job
    assert run.returncode == 0, run.stderr
    for label in ("mo-asha@4w", "nsga2@4w"):
        a = json.loads((mo_results / "ptb" / label / "trial-0.json").read_text())
        b = json.loads((tmp_path / "ptb" / label / "trial-0.json").read_text())
        assert a["trajectory"] == b["trajectory"] and a["front"] == b["front"]


def test_report_plot_and_export_speak_hypervolume(mo_results, tmp_path):
    report = cli("report", mo_results, "--json")
    assert report.returncode == 0, report.stderr
    bench = json.loads(report.stdout)["benchmarks"]["ptb"]
    assert bench["objectives"] == ["logppl", "params"] and bench["hv_space"]["true_front_size"] == 6
    text = cli("report", mo_results)
    assert "hypervolume regret on logppl,params" in text.stdout
    plot = cli("plot", mo_results, "--out", tmp_path / "fig", "--format", "png")
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "fig" / "ptb-fronts.png").is_file()


def test_an_edited_multi_objective_file_is_refused(mo_results, tmp_path):
    import shutil

    root = tmp_path / "r"
    shutil.copytree(mo_results, root)
    path = root / "ptb" / "mo-rs" / "trial-0.json"
    record = json.loads(path.read_text())
    record["trajectory"]["regret"] = [None if r is None else r * 0.5 for r in record["trajectory"]["regret"]]
    record["final_regret"] = record["trajectory"]["regret"][-1]
    path.write_text(json.dumps(record))
    run = cli("report", root)
    assert run.returncode == 2 and "edited" in run.stderr and "Traceback" not in run.stderr


def test_single_and_multi_objective_results_are_not_mixed(mo_results, tmp_path):
    import shutil

    root = tmp_path / "r"
    shutil.copytree(mo_results, root)
    # a single-objective run into a multi-objective folder: one line, before anything is written
    run = cli("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "20", "--out", root)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "scored on logppl,params" in run.stderr and "cannot be compared" in run.stderr
    assert not (root / "ptb" / "rs50e").exists()
    # and the other way round
    single = tmp_path / "s"
    assert cli("run", "--algo", "rs50e", "--trials", "1", "--budget-hours", "20", "--out", single).returncode == 0
    mixed = cli("run", "--algo", "mo-rs", "--objectives", "logppl,params", "--trials", "1", "--budget-hours", "20",
                "--out", single)
    assert mixed.returncode == 2 and "scored on one objective" in mixed.stderr
    assert not (single / "ptb" / "mo-rs").exists()
    # a folder mixed by hand is still refused by report
    shutil.copytree(single / "ptb" / "rs50e", root / "ptb" / "rs50e")
    report = cli("report", root)
    assert report.returncode == 2 and "different objectives" in report.stderr


def test_observations_carry_the_objectives_and_inputs_the_known_ones(ptb):
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.base import Algorithm, Job

    seen = {}

    class Probe(Algorithm):
        name = "probe"

        def start(self, inputs):
            seen["known"] = inputs.known_objectives
            seen["objectives"] = inputs.objectives
            self._rows = iter([5, 6])

        def ask(self):
            row = next(self._rows, None)
            return None if row is None else Job(row, 3)

        def tell(self, job, observation):
            seen[job.arch] = observation.objectives

    env = Environment(ptb.search, 1e9, ("logppl", "params", "epoch_s"))
    run_on(env, Probe(), 0, objectives=("logppl", "params", "epoch_s"))
    assert seen["objectives"] == ("logppl", "params", "epoch_s")
    assert np.array_equal(seen["known"][:, 1], ptb.search.num_params) and np.isnan(seen["known"][:, [0, 2]]).all()
    assert not seen["known"].flags.writeable
    assert seen[5]["logppl"] == ptb.search.val_loss[5, 2] and seen[5]["params"] == ptb.search.num_params[5]


def test_known_constraints_steer_new_architectures_and_infeasible_finds_do_not_count(ptb):
    from nasbench_cli.harness.trial import run_trial

    record = run_trial("ptb", "mo-rs", 0, 0, 300 * 3600.0, objectives=("logppl", "params"),
                       constraints=["params<=8e6"])
    rows = ptb.search.indices_of(record["trajectory"]["arch"])
    assert (ptb.search.num_params[rows] <= 8e6).all()               # drawn among feasible ones only
    assert all(ptb.search.num_params[ptb.search.index_of(a)] <= 8e6 for a, _ in record["front"])
    hb = run_trial("ptb", "hb", 0, 0, 300 * 3600.0, objectives=("logppl", "params"), constraints=["params<=8e6"])
    assert any(ptb.search.num_params[r] > 8e6 for r in ptb.search.indices_of(hb["trajectory"]["arch"]))
    assert all(ptb.search.num_params[ptb.search.index_of(a)] <= 8e6 for a, _ in hb["front"])


def test_parego_draws_a_new_scalarisation_at_each_refit(ptb):
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.multi_objective.algorithms import chebyshev
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm("parego", None, "ptb")
    env = Environment(ptb.search, 150 * 3600.0, ("logppl", "params"))
    from benchmarks.core.features import features

    run_on(env, algorithm, 3, features(ptb, "shipped-10d"), objectives=("logppl", "params"))
    weights = np.array(algorithm.weights)
    assert len(weights) >= 2 and np.allclose(weights.sum(axis=1), 1) and (weights >= 0).all()
    assert len({tuple(w) for w in weights.round(12)}) == len(weights)
    v = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    assert np.allclose(chebyshev(v, np.array([0.5, 0.5])), [0.5 + 0.025, 0.5 + 0.025, 0.25 + 0.025])


def test_query_front_lists_the_true_front(ptb):
    run = cli("query", "--front", "--objectives", "logppl,params", "--json")
    assert run.returncode == 0, run.stderr
    payload = json.loads(run.stdout)
    space = objective_space(ptb, ("logppl", "params"))
    assert len(payload["front"]) == len(space.front_rows) == payload["hv_space"]["true_front_size"]
    first = payload["front"][0]
    assert first["recepie_id"] == ptb.best_id and first["logppl"] == ptb.l_star     # the loss end: L*'s cell
    params = [row["params"] for row in payload["front"]]
    assert params == sorted(params, reverse=True)         # along a 2-D front: lower loss, more parameters
    bad = cli("query", "--front", "--arch", "1000001")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_mo_lcbo_promotes_by_non_dominated_sorting_and_new_cells_are_the_best_scored(ptb):
    """mo-lcbo keeps lcbo's rungs and quotas; each new cell is the first of its scored pool (16) in
    priority_order of (minus score, params), which is the best-scored of the pool; every promotion is within its rung's top `keep` share of
    that order at the time it is made. (Anchor cells off: their pools are tested below.)"""
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.multi_objective.algorithms import priority_order
    from optimizers.registry import make_algorithm
    from test_proxy_search import scores_for

    scores = scores_for(ptb)
    objectives = ("logppl", "params")
    algorithm = make_algorithm("mo-lcbo", {"anchor_every": "0"}, "ptb")
    pools = []
    original = algorithm._rank_pool

    def spy(pool, key):
        order = original(pool, key)
        pools.append((list(pool), order))
        return order

    env = Environment(ptb.search, 200 * 3600.0, objectives)
    algorithm_start = algorithm.start

    def start(inputs):
        algorithm_start(inputs)
        algorithm._candidates.rank_pool = spy

    algorithm.start = start
    run_on(env, algorithm, 3, None, scores, objectives=objectives)
    assert {rung for _, rung, _ in algorithm.decisions} == {0, 1, 2, 3} and any(d[2] for d in algorithm.decisions)
    new_cells = [row for row, rung, promoted in algorithm.decisions if rung == 0 and not promoted]
    # (once every scored cell has been drawn, the passed-over ones are started with no new pool; the last
    # pool holds what was left)
    assert pools and len(pools) <= len(new_cells) and all(len(pool) == 16 for pool, _ in pools[:-1])
    for (pool, order), row in zip(pools, new_cells):
        points = np.c_[-scores[pool], ptb.search.num_params[pool]]
        assert pool[order[0]] == row and order == priority_order(points, 0).tolist()
        assert row == pool[int(np.argmax(scores[pool]))]
    again = make_algorithm("mo-lcbo", {"anchor_every": "0"}, "ptb")
    env_again = Environment(ptb.search, 200 * 3600.0, objectives)
    run_on(env_again, again, 3, None, scores, objectives=objectives)
    assert env_again.history.arch == env.history.arch          # the spy changed nothing; same seed, same run


def test_mo_lcbo_promotes_more_cells_to_nine_epochs_early_than_lcbo(ptb):
    """mo-lcbo's early caps are 40, 24, 3 (lcbo's 40, 8, 3): every promotion stays within its quota, and
    more than 8 two-epoch results go on to 9 epochs while keep's 1/20 alone would allow fewer, so a front
    gets several deep cells sooner; lcbo's caps (`early_cap=40,8,3`) give a different run."""
    import math

    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.registry import make_algorithm
    from test_proxy_search import scores_for

    scores = scores_for(ptb)
    objectives = ("logppl", "params")
    keep, early, cap = [0.2, 0.05, 0.333], [0.333, 0.2, 0.333], [40, 24, 3]

    def run(settings=None):
        algorithm = make_algorithm("mo-lcbo", settings, "ptb")
        env = Environment(ptb.search, 150 * 3600.0, objectives)
        run_on(env, algorithm, 3, None, scores, objectives=objectives)
        return env, algorithm

    env, algorithm = run()
    assert algorithm.settings.early_cap == "40,24,3"

    def allowed(k, n, caps):
        return max(math.floor(n * keep[k]), min(math.floor(n * early[k]), caps[k]))

    results, promoted, beyond_lcbo = [0, 0, 0, 0], [0, 0, 0, 0], False
    for row, rung, was_promoted in algorithm.decisions:      # one worker: each job is told before the next ask
        if was_promoted:
            k = rung - 1
            promoted[rung] += 1
            assert promoted[rung] <= allowed(k, results[k], cap)
            beyond_lcbo |= promoted[rung] > allowed(k, results[k], [40, 8, 3])
        results[rung] += 1
    assert promoted[2] > 8 and beyond_lcbo
    lcbo_caps, _ = run({"early_cap": "40,8,3"})
    assert lcbo_caps.history.arch != env.history.arch


def test_lcbo_head_start_trains_the_best_scored_of_a_pool_to_the_end_first(ptb):
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.registry import make_algorithm
    from test_proxy_search import scores_for

    scores = scores_for(ptb)
    algorithm = make_algorithm("lcbo", {"head_start": "2", "head_start_pool": "40"}, "ptb")
    env = Environment(ptb.search, 50 * 3600.0)
    run_on(env, algorithm, 5, None, scores)
    universe = np.flatnonzero(~np.isnan(scores))
    pool = universe[np.random.default_rng(5).permutation(len(universe))][:40]
    best = pool[np.argsort(-scores[pool], kind="stable")[:2]].tolist()
    assert [d[0] for d in algorithm.decisions[:2]] == best and [d[1] for d in algorithm.decisions[:2]] == [3, 3]
    assert env.history.overhead_s[0] == pytest.approx(40 * 2.0) and sum(env.history.overhead_s[:2]) == 80.0
    assert env.history.arch[:2] == best and max(env.history.epochs[:2]) == 50   # (a diverged log ends early)


def spy_on_pools(algorithm) -> list:
    """A list that fills, as `algorithm` runs, with (pool, chosen row) for every scored pool it draws."""
    pools = []
    start_algorithm = algorithm.start

    def start(inputs):
        start_algorithm(inputs)
        rank_pool = algorithm._candidates.rank_pool

        def spy(pool, key):
            order = rank_pool(pool, key)
            pools.append((list(pool), pool[order[0]]))
            return order
        algorithm._candidates.rank_pool = spy

    algorithm.start = start
    return pools


def test_mo_lcbo_anchor_cells_come_from_the_smallest_cells_and_train_deep_first(ptb):
    """With `anchor_every=2` and `anchor_pool=0`, every second new cell is the best-scored of a pool of 16
    (as every other new cell) drawn from the anchor stratum (the cells at or below the 3% quantile of
    params: PTB's smallest cells, 5.73 M), and trains straight to rung `anchor_rung` (9 epochs). The
    stratum's other candidates stay for later pools of the whole table, and a score is paid once: each
    job's overhead is 2 s per candidate of its pool not scored before. Once the stratum is used up, new
    cells come from the whole table alone. With the default pool, anchor pools hold 2 candidates."""
    from benchmarks.core.environment import Environment
    from nasbench_cli.harness.simulator import run_on
    from optimizers.registry import make_algorithm
    from test_proxy_search import scores_for

    scores = scores_for(ptb)
    objectives = ("logppl", "params", "epoch_s")
    params = ptb.search.num_params
    smallest = params <= np.quantile(params, 0.03)
    assert params[smallest].max() == params.min()
    defaults = make_algorithm("mo-lcbo", None, "ptb").settings
    assert (defaults.anchor_every, defaults.anchor_rung, defaults.anchor_pool, defaults.clip_inputs) == (4, 2, 2, True)
    assert not hasattr(make_algorithm("lcbo", None, "ptb").settings, "clip_inputs")   # lcbo: unchanged
    algorithm = make_algorithm("mo-lcbo", {"anchor_every": "2", "anchor_rung": "2", "anchor_pool": "0"}, "ptb")
    pools = spy_on_pools(algorithm)
    env = Environment(ptb.search, 100 * 3600.0, objectives)
    run_on(env, algorithm, 3, None, scores, objectives=objectives)
    new = [(row, rung) for row, rung, promoted in algorithm.decisions if not promoted]
    chosen = [row for _, row in pools]
    assert len(chosen) == len(set(chosen)) and chosen == [row for row, _ in new[:len(chosen)]]
    anchor_pools = [(pool, row) for pool, row in pools if smallest[pool].all()]
    for pool, row in anchor_pools:
        assert row == pool[int(np.argmax(scores[pool]))]               # the best-scored of its pool
    anchors = {row for _, row in anchor_pools}
    assert {rung for row, rung in new if row in anchors} == {2}        # straight to 9 epochs
    assert {rung for row, rung in new if row not in anchors} == {0}
    assert [row in anchors for row, _ in new[:2 * len(anchors)]] == [False, True] * len(anchors)
    assert env.history.epochs[env.history.arch.index(new[1][0])] == 9
    # the stratum is used up (fewer than 16 of its scored cells are never drawn), then the table goes on
    scored_small = set(np.flatnonzero(smallest & ~np.isnan(scores)).tolist())
    in_anchor_pools = {row for pool, _ in anchor_pools for row in pool}
    assert len(scored_small - in_anchor_pools) < 16 and len(pools) > 2 * len(anchor_pools) + 10
    later = {row for pool, _ in pools if not smallest[pool].all() for row in pool}
    assert (in_anchor_pools - anchors) & later                         # passed over, drawn again later
    distinct = {row for pool, _ in pools for row in pool}
    assert sum(env.history.overhead_s) == pytest.approx(2.0 * len(distinct))   # each score paid once
    smaller = make_algorithm("mo-lcbo", {"anchor_every": "2", "anchor_rung": "2"}, "ptb")   # the default pool: 2
    small_pools = spy_on_pools(smaller)
    run_on(Environment(ptb.search, 30 * 3600.0, objectives), smaller, 3, None, scores, objectives=objectives)
    sizes = [(len(pool), bool(smallest[pool].all())) for pool, _ in small_pools]
    assert {size for size, anchor in sizes if anchor} == {2} and {size for size, anchor in sizes[:20] if not anchor} == {16}
