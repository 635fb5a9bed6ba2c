"""NMTHPO's six translation tables as benchmarks nmt-* (issue 46), on the real files in ../shared/hpo-nmt."""
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.core.catalog import FAMILIES
from benchmarks.core.errors import DataError
from benchmarks.core.objectives import architecture_values, known_before_training
from benchmarks.core.pareto import objective_space
from benchmarks.core.problem import scoring_problem
from benchmarks.core.registry import get_spec, load_benchmark
from benchmarks.core.space import architectures, configuration_space, encodings
from benchmarks.nmt.table import SCALED_TOLERANCE, data_folder, parse_pair

import cli_process

PAIRS = ("en-ja", "ja-en", "ru-en", "so-en", "sw-en", "zh-en")
# ../shared/README.md: systems, BLEU range, systems without a GPU memory value, published front size
FACTS = {"en-ja": (168, 2.20, 20.74, 0, 8), "ja-en": (150, 9.86, 16.41, 0, 5), "ru-en": (176, 2.17, 20.23, 0, 4),
         "so-en": (604, 2.14, 11.23, 9, 7), "sw-en": (767, 2.00, 26.09, 25, 14), "zh-en": (118, 2.25, 14.66, 1, 3)}
DATASETS = Path(data_folder())


def cli(*args, env=None):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True,
                          env=env)


@pytest.fixture(scope="module", params=PAIRS)
def nmt(request):
    return load_benchmark(f"nmt-{request.param}")


def test_the_tables_hold_the_published_systems(nmt):
    systems, low, high, no_memory, front = FACTS[nmt.name[4:]]
    search = nmt.search
    bleu = -search.val_loss[:, 0]
    assert search.n == systems and (bleu.min(), bleu.max()) == (low, high)
    assert nmt.l_star == -high and np.array_equal(nmt.test_loss, search.val_loss)    # dev only: one number
    assert int(np.isnan(architecture_values(search, "memory")).sum()) == no_memory  # 0 = not recorded: unknown
    assert len(set(architectures(search))) == systems
    assert np.array_equal(search.wall_time_s, np.ones((systems, 1)))               # the clock counts evaluations
    assert FAMILIES["nmt"] == tuple(f"nmt-{p}" for p in PAIRS)


def test_the_encoding_is_upstreams_hyps_scaled(nmt):
    """Every row's encoding equals its `.hyps_scaled` line within the file's rounding (3-4 decimals:
    3/7 is written 0.429), so a model fitted on upstream's vectors reads ours."""
    scaled = np.loadtxt(DATASETS / f"{nmt.name[4:]}.hyps_scaled")
    difference = np.abs(encodings(nmt.search) - scaled)
    assert difference.max() <= SCALED_TOLERANCE
    assert np.median(difference) == 0.0


def test_the_space_operations_stay_in_the_pairs_domains(nmt):
    space, rng = nmt.search.space, np.random.default_rng(0)
    domains = space.domains
    for _ in range(50):
        config = space.sample(rng)
        assert space.parse(config.to_dict()) == config
        child = space.mutate(config, rng)
        assert sum(a != b for a, b in zip(config.to_dict().values(), child.to_dict().values())) == 1
        assert space.from_values(space.to_values(child)) == child
    first = architectures(nmt.search)[0]
    neighbours = space.neighbours(first)
    assert len(neighbours) == len(set(neighbours)) == sum(len(v) - 1 for v in domains.values())
    assert all(space.validate(n) == n for n in neighbours)
    assert len(list(configuration_space(space.choices()).values())) == 6
    assert space.size == int(np.prod([len(v) for v in domains.values()]))


def test_the_low_resource_pairs_have_their_own_domains():
    spaces = {p: load_benchmark(f"nmt-{p}").search.space.domains for p in ("so-en", "sw-en", "zh-en")}
    assert spaces["so-en"]["num_layers"] == (1, 2, 4) and spaces["sw-en"]["num_layers"] == (1, 2, 4, 6)
    assert spaces["zh-en"]["num_layers"] == (2, 4) and spaces["zh-en"]["bpe_symbols"] == (10000, 30000, 50000)
    assert spaces["so-en"]["bpe_symbols"] == spaces["sw-en"]["bpe_symbols"] == (1000, 2000, 4000, 8000, 16000, 32000)


def test_the_true_front_is_the_published_one(nmt):
    space = objective_space(nmt, *scoring_problem(nmt.name, ("bleu", "decode_s"), ()))
    published = np.flatnonzero(np.loadtxt(DATASETS / f"{nmt.name[4:]}.fronts"))
    assert sorted(nmt.search.ids[space.front_rows].tolist()) == published.tolist()
    assert len(published) == FACTS[nmt.name[4:]][4]


def test_query_front_reproduces_a_published_front():
    done = cli("query", "--front", "--benchmark", "nmt-sw-en", "--objectives", "bleu,decode_s", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    published = np.flatnonzero(np.loadtxt(DATASETS / "sw-en.fronts")).tolist()
    assert sorted(row["recepie_id"] for row in result["front"]) == published
    assert result["units"] == {"bleu": "BLEU points", "decode_s": "seconds"}


def test_unknown_memory_is_never_zero_nor_on_a_front():
    sw = load_benchmark("nmt-sw-en")
    memory = architecture_values(sw.search, "memory")
    unknown = np.flatnonzero(np.isnan(memory))
    assert len(unknown) == 25 and not known_before_training("memory", "nmt-sw-en")
    assert known_before_training("memory", "gpt-s")          # gpt's memory is computed from the architecture
    space = objective_space(sw, *scoring_problem(sw.name, ("bleu", "decode_s", "memory"), ()))
    assert not space.feasible[unknown].any() and not np.isin(space.front_rows, unknown).any()
    constrained = objective_space(sw, *scoring_problem(sw.name, ("bleu", "decode_s"), ("memory<=1e9",)))
    assert not constrained.feasible[unknown].any() and constrained.feasible.sum() == sw.search.n - 25


def test_every_space_algorithm_and_the_multi_objective_set_run_on_a_pair(tmp_path):
    out = tmp_path / "r"
    done = cli("run", "--benchmark", "nmt-zh-en", "--algo", "all", "--trials", "1", "--budget-evals", "12",
               "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["algorithms"]) == {"rs", "bo", "re", "tpe", "smac"} and result["budget_evaluations"] == 12
    for summary in result["algorithms"].values():
        assert summary["trials"] == 1 and 0 <= summary["mean_final_regret"] <= 14.66 - 2.25
    mo = cli("run", "--benchmark", "nmt-ja-en", "--algo", "mo-rs,mo-re,nsga2", "--objectives", "bleu,decode_s",
             "--trials", "2", "--out", out, "--json")
    assert mo.returncode == 0, mo.stderr
    report = json.loads(cli("report", out, "--benchmark", "nmt-ja-en", "--json").stdout)
    rows = report["benchmarks"]["nmt-ja-en"]["algorithms"]
    for label, row in rows.items():          # the AutoML 2022 count, checked against the trial files
        records = [json.loads(p.read_text()) for p in sorted((out / "nmt-ja-en" / label).glob("trial-*.json"))]
        published = set(np.flatnonzero(np.loadtxt(DATASETS / "ja-en.fronts")).tolist())
        counts = [len(published & set(r["trajectory"]["arch"][:200])) for r in records]
        assert row["pareto_found"] == {"mean": np.mean(counts), "min": min(counts), "max": max(counts), "of": 5,
                                       "lookups": 200}
    text = cli("report", out, "--benchmark", "nmt-ja-en").stdout
    assert "true Pareto-optimal systems (BLEU vs decode time) found within 200 lookups" in text


def test_a_constraint_on_decode_time_and_the_family_name(tmp_path):
    out = tmp_path / "r"
    refused = cli("run", "--benchmark", "nmt", "--algo", "rs", "--constraint", "decode_s<=400", "--out", out)
    assert refused.returncode == 2 and "no architecture of 'nmt-en-ja' satisfies decode_s<=400" in refused.stderr
    assert not out.exists()                  # checked on every pair before any runs
    done = cli("run", "--benchmark", "nmt", "--algo", "rs", "--constraint", "decode_s<=800", "--trials", "1",
               "--budget-evals", "5", "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["benchmarks"]
    assert [r["benchmark"] for r in runs] == [f"nmt-{p}" for p in PAIRS]
    report = json.loads(cli("report", out, "--benchmark", "nmt", "--json").stdout)
    assert set(report["benchmarks"]) == {f"nmt-{p}" for p in PAIRS}
    for name, bench in report["benchmarks"].items():
        assert bench["constraints"] == ["decode_s<=800.0"]


def _copy(tmp_path) -> Path:
    folder = tmp_path / "datasets"
    shutil.copytree(DATASETS, folder)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


@pytest.mark.parametrize("damage, message", [
    (lambda f: (f / "zh-en.evals").write_text("\n".join((f / "zh-en.evals").read_text().splitlines()[:-1]) + "\n"),
     r"zh-en\.\*: the four files are not aligned: 118 lines in \.hyps, 118 lines in \.hyps_scaled, 117 lines in \.evals"),
    (lambda f: (f / "zh-en.evals").write_text((f / "zh-en.evals").read_text().replace("13.93", "13.9x", 1)),
     r"zh-en\.evals line 1: '13\.9x' is not a number"),
    (lambda f: (f / "zh-en.hyps").write_text((f / "zh-en.hyps").read_text().replace("30000.0", "20000.0", 1)),
     r"zh-en\.hyps line 1: bpe_symbols 20000 is not one of zh-en's 10000, 30000, 50000"),
    (lambda f: (f / "zh-en.evals").write_text((f / "zh-en.evals").read_text().replace("13.93", "130.93", 1)),
     r"zh-en\.evals line 1: dev_bleu must be in \[0, 100\] BLEU points, got 130\.93"),
    (lambda f: (f / "zh-en.hyps_scaled").write_text((f / "zh-en.hyps_scaled").read_text().replace("0.5", "0.7", 1)),
     r"zh-en\.hyps_scaled line 1: does not scale line 1 of \.hyps"),
    (lambda f: (f / "zh-en.fronts").write_text((f / "zh-en.fronts").read_text().replace("0", "2", 1)),
     r"zh-en\.fronts line 1: must be 0 or 1, got 2"),
])
def test_bad_data_is_one_line_naming_file_and_line(tmp_path, damage, message):
    folder = _copy(tmp_path)
    damage(folder)
    with pytest.raises(DataError, match=message):
        parse_pair(folder, "nmt-zh-en")
    done = cli("data", "info", "--benchmark", "nmt-zh-en", "--data-dir", folder.parent)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_environment_variable_and_a_missing_folder(tmp_path):
    folder = _copy(tmp_path)
    env = {**os.environ, "NASBENCH_NMT_DATA": str(folder)}
    done = cli("data", "info", "--benchmark", "nmt-ru-en", "--json", env=env)
    assert done.returncode == 0 and json.loads(done.stdout)["systems"] == 176
    missing = cli("data", "info", "--benchmark", "nmt-ru-en", "--data-dir", tmp_path / "nowhere")
    assert missing.returncode == 2 and "NMTHPO folder not found" in missing.stderr


def test_transfer_between_pairs_matches_a_recomputation_from_the_files(tmp_path):
    from scipy.stats import kendalltau

    done = cli("analyze", "transfer", "--benchmark", "nmt", "--out", tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["pairs"] == [f"nmt-{p}" for p in PAIRS] and (tmp_path / "nmt-transfer.png").is_file()

    def column(pair, k):
        hyps = [tuple(line.split()) for line in (DATASETS / f"{pair}.hyps").read_text().splitlines()]
        values = [float(line.split()[k]) for line in (DATASETS / f"{pair}.evals").read_text().splitlines()]
        return dict(zip(hyps, values))

    for metric, k in (("bleu", 0), ("decode_s", 1)):
        a, b = column("en-ja", k), column("ja-en", k)
        shared = sorted(set(a) & set(b))
        expected = kendalltau([a[c] for c in shared], [b[c] for c in shared]).statistic
        assert result["metrics"][metric]["shared"][0][1] == len(shared) == 141
        assert result["metrics"][metric]["kendall_tau"][0][1] == pytest.approx(expected, abs=1e-12)
    assert result["metrics"]["bleu"]["kendall_tau"][0][3] is None        # en-ja and so-en share no configuration


def test_the_cost_aware_clock_charges_each_evaluation_its_training_updates(tmp_path):
    """nmt-<pair>-updates: the same systems and scores; an evaluation costs its recorded training updates
    (the `.evals` file's fourth column), the budget counts updates, and rs proposes the same systems as on
    the evaluation clock (its proposals do not read the clock)."""
    from benchmarks.core.catalog import NMT_DEFAULT_BUDGET, NMT_MEDIAN_UPDATES

    for pair, median in NMT_MEDIAN_UPDATES.items():
        updates = np.loadtxt(Path(data_folder()) / f"{pair}.evals")[:, 3]
        assert median == np.median(updates)
        spec = get_spec(f"nmt-{pair}-updates")
        assert spec.clock == "updates" and spec.default_budget == NMT_DEFAULT_BUDGET * median
    updates = np.loadtxt(Path(data_folder()) / "zh-en.evals")[:, 3]
    costly, plain = load_benchmark("nmt-zh-en-updates"), load_benchmark("nmt-zh-en")
    assert np.array_equal(costly.search.wall_time_s[:, 0], updates)
    assert np.array_equal(costly.test_loss, plain.test_loss) and costly.checksum == plain.checksum
    out = tmp_path / "r"
    done = cli("run", "--benchmark", "nmt-zh-en-updates,nmt-zh-en", "--algo", "rs", "--trials", "2",
               "--budget-evals", "500000", "--out", out)
    assert done.returncode == 0, done.stderr
    for k in range(2):
        record = json.loads((out / "nmt-zh-en-updates" / "rs" / f"trial-{k}.json").read_text())
        traj = record["trajectory"]
        assert traj["time_s"] == list(np.cumsum(updates[traj["arch"]]))        # one worker: updates add up
        assert record["simulated_time_s"] <= record["budget_s"] == 500000.0
        assert traj["time_s"][-1] + updates.max() > 500000.0 or len(traj["arch"]) == len(updates)
        plain_arch = json.loads((out / "nmt-zh-en" / "rs" / f"trial-{k}.json").read_text())["trajectory"]["arch"]
        assert traj["arch"] == plain_arch[:len(traj["arch"])]
    report = cli("report", out, "--benchmark", "nmt-zh-en-updates")
    assert report.returncode == 0 and "training updates" in report.stdout and "updates to" in report.stdout
    refused = cli("run", "--benchmark", "nmt-zh-en-updates", "--algo", "rs", "--budget-hours", "3", "--out", out)
    assert refused.returncode == 2 and "training updates (--budget-evals N" in refused.stderr
