"""HW-GPT-Bench's spaces as benchmarks gpt-s, gpt-m, gpt-l (issue 27), on the real files in ../shared."""
import json
import shutil
import sys

import numpy as np
import pytest

from benchmarks.core.errors import UserError
from benchmarks.core.registry import load_benchmark
from benchmarks.core.space import architectures, configuration_space

import cli_process

SPACES = ("gpt-s", "gpt-m", "gpt-l")
COUNTS = {"gpt-s": 10_000, "gpt-m": 5_245, "gpt-l": 429}
PPL_RANGE = {"gpt-s": (22.16, 41.92), "gpt-m": (21.14, 35.67), "gpt-l": (18.58, 29.32)}   # ../shared/README.md


def cli(*args, env=None):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True,
                          env=env)


@pytest.fixture(scope="module", params=SPACES)
def gpt(request):
    return load_benchmark(request.param)


def test_the_tables_hold_the_published_observations(gpt):
    search = gpt.search
    assert search.n == COUNTS[gpt.name]
    low, high = PPL_RANGE[gpt.name]
    assert round(float(search.val_loss.min()), 2) == low and round(float(search.val_loss.max()), 2) == high
    assert gpt.l_star == search.val_loss.min() and np.array_equal(gpt.test_loss, search.val_loss)
    archs = architectures(search)
    assert len(set(archs)) == search.n                       # distinct after dropping the padding
    assert np.array_equal(search.wall_time_s, np.ones((search.n, 1)))    # one evaluation = one clock unit


def test_padding_does_not_make_two_architectures(gpt):
    space = gpt.search.space
    record = json.loads(gpt.search.recipes[0])
    n = record["sample_n_layer"]
    padded = dict(record, sample_n_head=record["sample_n_head"] + [space.head_choices[0]] * (space.max_layers - n),
                  sample_mlp_ratio=record["sample_mlp_ratio"] + [space.mlp_ratio_choices[-1]] * (space.max_layers - n))
    assert space.parse(padded) == space.parse(record) == architectures(gpt.search)[0]
    with pytest.raises(UserError):
        space.parse(dict(record, sample_n_head=record["sample_n_head"][: n - 1]))
    with pytest.raises(UserError):
        space.parse(dict(record, sample_layer_indices=list(range(1, n + 1))))
    with pytest.raises(UserError):
        space.parse(dict(record, sample_embed_dim=7))


def test_parameters_and_flops_match_an_independent_pytorch_build(gpt):
    """20 random architectures per space: parameters of the same model built in PyTorch (tied embedding
    counted once) and FLOPs of its 1,024-token forward pass by torch.utils.flop_counter (on the meta device:
    shapes only)."""
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    from benchmarks.gpt import sizes
    from benchmarks.gpt.table import supernet_config
    from gpt_reference import ReferenceGPT

    config = supernet_config(gpt.search)
    rng = np.random.default_rng(0)
    archs = architectures(gpt.search)
    rows = rng.choice(gpt.search.n, 20, replace=False)
    for k, row in enumerate(rows.tolist()):
        arch = archs[row]
        with torch.device("meta"):
            model = ReferenceGPT(arch, config.vocab_size)
            assert sum(p.numel() for p in model.parameters()) == sizes.params(arch, config) == gpt.search.num_params[row]
            if k < 5:             # the forward pass on meta tensors: five per space
                with FlopCounterMode(display=False) as counter:
                    model(torch.zeros(1, config.block_size, dtype=torch.long))
                assert counter.get_total_flops() == sizes.flops(arch, config)
        weights = 2 * sum(p.numel() for p in model.parameters())
        cache = sum(2 * config.block_size * h * 64 * 2 for h in arch.heads)
        assert sizes.memory(arch, config) == weights + cache


def test_the_space_offers_sampling_mutation_neighbours_and_a_configspace(gpt):
    space = gpt.search.space
    rng = np.random.default_rng(1)
    arch = architectures(gpt.search)[3]
    for _ in range(200):
        child = space.mutate(arch, rng)
        space.validate(child)
        changed = (child.embed_dim != arch.embed_dim) + (child.bias != arch.bias) + (child.n_layer != arch.n_layer) + \
            sum(a != b for a, b in zip(child.heads, arch.heads)) + sum(a != b for a, b in zip(child.mlp_ratios, arch.mlp_ratios))
        assert changed >= 1 and (child.n_layer != arch.n_layer or changed == 1)
    neighbours = space.neighbours(arch)
    assert len(set(neighbours)) == len(neighbours) and arch not in neighbours
    assert all(space.validate(n) for n in neighbours)
    for _ in range(50):
        sample = space.validate(space.sample(rng))
        assert space.from_values(space.to_values(sample)) == sample
    cs = configuration_space(space.choices(), seed=0)
    for config in cs.sample_configuration(30):
        space.from_configuration(config)                  # conditional layers: always a valid architecture
    assert space.encode(arch).shape == (space.encoding_length,)


def test_loading_from_the_cache_gives_the_same_table(tmp_path, monkeypatch):
    from benchmarks.core import registry

    monkeypatch.setenv("NASBENCH_CACHE", str(tmp_path))
    registry._LOADED.clear()
    built = load_benchmark("gpt-l")
    registry._LOADED.clear()
    cached = load_benchmark("gpt-l")
    registry._LOADED.clear()
    assert list(tmp_path.glob("gpt-l-*.npz"))
    assert np.array_equal(built.search.val_loss, cached.search.val_loss)
    assert built.search.recipes == cached.search.recipes and np.array_equal(built.search.num_params, cached.search.num_params)


@pytest.mark.parametrize("damage, words", [
    ("missing", "not found"),
    ("bad json", "line 3: not JSON"),
    ("bad perplexity", "perplexity must be a finite number"),
    ("outside the space", "line 2: sample_embed_dim"),
    ("implausible perplexity", "line 5: perplexity must be a finite number >= 1 and at most the vocabulary size"),
    ("unknown arch key", "line 2: unknown key 'sample_n_heads' in a gpt-l architecture"),
    ("unknown record key", "line 2: unknown key 'latency'"),
])
def test_a_missing_or_corrupt_file_is_one_line(tmp_path, damage, words):
    folder = tmp_path / "hw"
    shutil.copytree("../shared/hw-gpt-bench", folder)
    path = folder / "gpt_l_observations.jsonl"
    path.chmod(0o644)
    lines = path.read_text().splitlines()
    if damage == "missing":
        path.unlink()
    elif damage == "bad json":
        lines[2] = "{oops"
    elif damage == "bad perplexity":
        record = json.loads(lines[4])
        record["perplexity"] = "NaN"
        lines[4] = json.dumps(record)
    elif damage == "implausible perplexity":           # 1e308 passed before: above the vocabulary's 50,254
        record = json.loads(lines[4])
        record["perplexity"] = 1e308
        lines[4] = json.dumps(record)
    elif damage == "unknown arch key":                 # a misspelt key was ignored before
        record = json.loads(lines[1])
        record["arch"]["sample_n_heads"] = record["arch"]["sample_n_head"]
        lines[1] = json.dumps(record)
    elif damage == "unknown record key":
        record = json.loads(lines[1])
        record["latency"] = 3.2
        lines[1] = json.dumps(record)
    else:
        record = json.loads(lines[1])
        record["arch"]["sample_embed_dim"] = 999
        lines[1] = json.dumps(record)
    if damage != "missing":
        path.write_text("\n".join(lines) + "\n")
    run = cli("data", "info", "--benchmark", "gpt-l", "--data-dir", folder, env={**__import__("os").environ,
                                                                                     "NASBENCH_CACHE": str(tmp_path / "c")})
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def gpt_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpt")
    run = cli("run", "--benchmark", "gpt-l", "--algo", "rs,re,bo,tpe,optuna", "--trials", "2", "--budget-evals", "30",
              "--out", out)
    assert run.returncode == 0, run.stderr
    return out


def test_every_space_algorithm_runs_with_an_evaluation_budget(gpt_results):
    import nasbench_cli.results.files as files

    results = files.load_results(gpt_results)
    assert set(results.algos("gpt-l")) == {"rs", "re", "bo", "tpe", "optuna"}
    for records in results.runs["gpt-l"].values():
        for record in records:
            assert record["budget_s"] == 30 and record["n_evaluations"] == 30
            assert record["trajectory"]["time_s"] == list(map(float, range(1, 31)))
            assert all(r >= 0 for r in record["trajectory"]["regret"])


def test_smac_runs_on_a_gpt_space_with_an_evaluation_budget(tmp_path):
    """SMAC over the native conditional choices (the costliest space algorithm: about 80 CPU-s per trial
    at 100 evaluations, so a short budget here)."""
    run = cli("run", "--benchmark", "gpt-l", "--algo", "smac", "--trials", "1", "--budget-evals", "11",
              "--out", tmp_path, "--json")     # its 10 random configurations, then one from the forest
    assert run.returncode == 0, run.stderr
    record = json.loads((tmp_path / "gpt-l" / "smac" / "trial-0.json").read_text())
    assert record["n_evaluations"] == 11 and len(set(record["trajectory"]["arch"])) == 11
    assert record["final_regret"] >= 0


def test_reports_figures_and_exports_count_evaluations(gpt_results, tmp_path):
    report = cli("report", gpt_results, "--at", "10,20", "--markdown")
    assert report.returncode == 0, report.stderr
    assert "after 10 evaluations" in report.stdout and "after 30 evaluations" in report.stdout
    assert "evals to" in report.stdout and "simulated hours" not in report.stdout.split("h (evals)")[0]
    at = json.loads(cli("report", gpt_results, "--at", "10", "--json").stdout)["at"]
    assert list(at) == ["10evals"]
    plot = cli("plot", gpt_results, "--out", tmp_path / "fig", "--format", "png")
    assert plot.returncode == 0, plot.stderr
    export = cli("export", gpt_results, "--out", tmp_path / "exp", "--format", "csv", "--at", "10,20")
    assert export.returncode == 0, export.stderr
    import csv

    rows = list(csv.DictReader(open(tmp_path / "exp" / "regret.csv")))
    assert {r["time_s"] for r in rows} == {"10.0", "20.0"} and all(r["time_h"] == "" for r in rows)


def test_the_wrong_kind_of_budget_is_one_line(tmp_path):
    for args, words in ((["--benchmark", "gpt-s", "--budget-hours", "3"], "--budget-evals"),
                        (["--benchmark", "ptb", "--budget-evals", "3"], "--budget-hours")):
        run = cli("run", "--algo", "rs", "--trials", "1", "--out", tmp_path, *args)
        assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr


def test_query_finds_evaluated_architectures_and_the_nearest_for_others():
    gpt = load_benchmark("gpt-s")
    arch = json.loads(gpt.search.recipes[42])
    padded = dict(arch, sample_n_head=arch["sample_n_head"] + [4] * (12 - arch["sample_n_layer"]),
                  sample_mlp_ratio=arch["sample_mlp_ratio"] + [2] * (12 - arch["sample_mlp_ratio"].__len__()))
    found = cli("query", "--benchmark", "gpt-s", "--recipe", json.dumps(padded), "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["id"] == 42
    other = dict(arch, sample_bias=not arch["sample_bias"])
    nearest = cli("query", "--benchmark", "gpt-s", "--recipe", json.dumps(other), "--json")
    payload = json.loads(nearest.stdout)
    assert nearest.returncode == 1 and payload["found"] is False and payload["nearest"]["distance"] > 0


def test_multi_objective_search_on_gpt(tmp_path):
    run = cli("run", "--benchmark", "gpt-l", "--algo", "mo-rs,mo-re,nsga2", "--objectives", "perplexity,params,memory",
              "--trials", "2", "--budget-evals", "30", "--out", tmp_path)
    assert run.returncode == 0, run.stderr
    record = json.loads((tmp_path / "gpt-l" / "mo-re" / "trial-0.json").read_text())
    assert record["objectives"] == ["perplexity", "params", "memory"] and record["front"]
    report = cli("report", tmp_path)
    assert report.returncode == 0 and "hypervolume regret on perplexity,params,memory" in report.stdout


def test_size_alone_ranks_supernet_perplexity(gpt):
    """The Kendall-tau check done for NAS-Bench-BERT: parameters, FLOPs and memory against perplexity."""
    from scipy import stats

    from benchmarks.core.objectives import architecture_values
    from nasbench_cli.commands.analyze_proxies import gpt_size_correlations

    result = gpt_size_correlations(gpt)
    taus = {row["metric"]: row["tau"] for row in result["metrics"]}
    direct = stats.kendalltau(gpt.search.num_params, gpt.search.val_loss[:, 0]).statistic
    assert taus["params"] == pytest.approx(direct, abs=1e-12)
    assert all(tau < -0.5 for tau in taus.values())        # larger sub-networks of a supernet: lower perplexity
    assert np.all(np.diff(architecture_values(gpt.search, "memory")[np.argsort(gpt.search.num_params)]) > -1e9)
