"""NAS-Bench-BERT (`--benchmark bert`) on the real published files: the FlexiBERT space, its
ConfigSpace, the encoding and snapping, and the single-fidelity bookkeeping of the runner."""
import json
import os
import sys

import numpy as np
import pytest

from benchmarks.flexibert.configspace import configuration_space, from_configuration, to_configuration
from benchmarks.flexibert.space import hamming, load_space
from benchmarks.flexibert.table import architectures, bert_data_dir
from benchmarks.core.errors import UserError

import cli_process

REPEATED = [[60, 222], [97, 387], [174, 405], [194, 438], [198, 315], [221, 391], [229, 307], [259, 487],
            [299, 489]]



@pytest.fixture(scope="module")
def published():
    return sorted(json.loads((bert_data_dir() / "BERT_benchmark.json").read_text()), key=lambda e: e["id"])


def test_space_size_and_every_published_architecture_parses(bert, published):
    space = bert.search.space
    assert space.size == 10_621_440 == load_space(bert_data_dir() / "BERT_search_space.json").size
    archs = architectures(bert.search)
    assert len(archs) == 500
    # each parses back to exactly the published overrides
    assert [a.to_dict() for a in archs] == [e["hparams"]["model_hparam_overrides"] for e in published]
    # 491 distinct configurations: the 9 pairs below are one architecture trained twice
    groups = {}
    for rid, arch in zip(bert.search.ids.tolist(), archs):
        groups.setdefault(arch, []).append(rid)
    assert len(groups) == 491
    assert sorted(ids for ids in groups.values() if len(ids) > 1) == REPEATED
    # distinct architectures have distinct encodings and configurations, repeats share theirs
    encodings = {space.encode(a).tobytes() for a in archs}
    configs = {json.dumps(to_configuration(a), sort_keys=True) for a in archs}
    assert len(encodings) == len(configs) == 491


def test_configspace_round_trip_and_samples(bert):
    from ConfigSpace import Configuration

    space = bert.search.space
    cs = configuration_space(space, seed=0)
    for arch in architectures(bert.search):
        config = Configuration(cs, values=to_configuration(arch))
        assert from_configuration(space, config) == arch
    for config in cs.sample_configuration(300):     # conditional layers: every sample is an architecture
        arch = from_configuration(space, config)
        assert len(arch.layers) == config["num_encoder_layers"]


def test_validation_rejects_choices_outside_the_space(bert):
    space = bert.search.space
    raw = architectures(bert.search)[0].to_dict()
    raw["nas_config"]["encoder_layers"][0]["num_operation_heads"] = 3
    with pytest.raises(UserError, match="num_operation_heads 3"):
        space.parse(raw)
    raw = architectures(bert.search)[0].to_dict()
    raw["nas_config"]["encoder_layers"][0]["operation_parameter"] = "DFT"     # an LT parameter on SA
    with pytest.raises(UserError, match="operation"):
        space.parse(raw)
    with pytest.raises(UserError, match="hidden_size 100"):
        space.parse({**raw, "hidden_size": 100})


def test_mutation_changes_one_choice(bert):
    space = bert.search.space
    rng = np.random.default_rng(0)
    for arch in architectures(bert.search)[:200]:
        child = space.validate(space.mutate(arch, rng))
        a, c = space.encode(arch), space.encode(child)
        changed = int((a != c).sum())
        if len(child.layers) == len(arch.layers):
            assert changed in (1, 2)           # 2: an operation (one-hot) changed
        else:
            assert child.layers[:2] == arch.layers[:2] and child.hidden_size == arch.hidden_size


def test_snapping_is_nearest_untrained_by_hamming(bert):
    from benchmarks.core.space import Snapper as HammingSnapper

    space = bert.search.space
    archs = architectures(bert.search)
    encodings = np.array([space.encode(a) for a in archs])
    snapper = HammingSnapper(space, encodings, np.random.default_rng(1))
    row = snapper.snap(archs[60])             # evaluated twice: one of the two rows, at distance 0
    assert row in (60, 222) and snapper.distances[-1] == 0
    twin = snapper.snap(archs[60])
    assert {row, twin} == {60, 222} and snapper.distances[-1] == 0
    third = snapper.snap(archs[60])           # both trained: the nearest of the rest
    others = np.ones(500, dtype=bool)
    others[[60, 222]] = False
    d = hamming(encodings, space.encode(archs[60]))
    assert d[third] == d[others].min() and snapper.distances[-1] == d[third] > 0
    snapper.trained[:] = True
    assert snapper.snap(archs[0]) is None


def test_single_fidelity_regret_bookkeeping(bert):
    from nasbench_cli.harness.trial import trial_record
    from optimizers.registry import make_algorithm

    record = trial_record(bert, make_algorithm("rs", None, "bert"), "rs", None, 0, 7, 10 * 3600.0)
    glue = -bert.search.val_loss[:, 0]
    assert record["l_star"] == pytest.approx(-75.13) and record["benchmark_best_arch"] == 179
    t = record["trajectory"]
    rows = bert.search.indices_of(t["arch"])
    assert t["epochs"] == [1] * len(rows) and len(set(t["arch"])) == len(rows)
    # each evaluation is charged its time_to_train, one after another
    assert np.allclose(t["time_s"], np.cumsum(bert.search.wall_time_s[rows, 0]))
    assert t["time_s"][-1] <= 10 * 3600.0 < t["time_s"][-1] + bert.search.wall_time_s[:, 0].max()
    # regret = best GLUE of the 500 - GLUE of the best architecture seen so far (the searcher's own number)
    best_so_far = np.maximum.accumulate(glue[rows])
    assert np.allclose(t["regret"], 75.13 - best_so_far)
    assert record["final_regret"] == pytest.approx(75.13 - best_so_far[-1])


@pytest.mark.parametrize("algo", ["rs", "bo", "re", "tpe", "smac", "optuna"])
def test_bert_algorithms_are_deterministic_and_train_distinct_architectures(bert, algo):
    from nasbench_cli.harness.trial import trial_record
    from optimizers.registry import make_algorithm

    budget = 8 * 3600.0          # about 11 evaluations: past every initial design of 10
    first = trial_record(bert, make_algorithm(algo, None, "bert"), algo, None, 0, 3, budget)
    again = trial_record(bert, make_algorithm(algo, None, "bert"), algo, None, 0, 3, budget)
    assert first["trajectory"] == again["trajectory"]
    archs = first["trajectory"]["arch"]
    assert len(archs) >= 10 and len(set(archs)) == len(archs)


def test_bert_re_children_are_snapped_mutations(bert):
    from benchmarks.core.space import encodings
    from nasbench_cli.harness.trial import run_algorithm
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm("re", None, "bert")
    run_algorithm(bert.search, algorithm, 5, 30 * 3600.0, encodings(bert.search))
    population = algorithm.settings.population
    children = algorithm.members[population:]
    assert len(children) >= 5
    archs = architectures(bert.search)
    space = bert.search.space
    for parent, child in zip(algorithm.parents, children):
        # a child is near its parent: one mutation away, then snapped to an evaluated architecture
        assert hamming(space.encode(archs[parent])[None, :], space.encode(archs[child]))[0] <= 12


def run_cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          env={**os.environ})


def test_cli_refuses_mismatched_algorithms_in_one_line(tmp_path):
    for args, needle in ((["--algo", "hb", "--benchmark", "bert"], "it needs epochs"),
                         (["--algo", "bo10d", "--benchmark", "bert"], "it needs graph2vec"),
                         (["--algo", "lcbo,rs", "--benchmark", "bert"], "lcbo cannot run on bert: it needs epochs ("),
                         (["--algo", "bert-re", "--benchmark", "bert"], "old name: use --algo re")):
        result = run_cli("run", *args, "--trials", "1", "--out", str(tmp_path))
        assert result.returncode == 2 and needle in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not any(tmp_path.iterdir())


def test_cli_data_info_and_query(tmp_path):
    info = json.loads(run_cli("data", "info", "--benchmark", "bert", "--json").stdout)
    assert (info["architectures"], info["distinct_configurations"], info["search_space_size"]) == (500, 491, 10_621_440)
    assert info["best_arch"] == 179 and info["best_glue"] == pytest.approx(75.13)
    record = json.loads(run_cli("query", "--benchmark", "bert", "--arch", "222", "--json").stdout)
    assert record["same_configuration_ids"] == [60, 222] and record["glue"] == pytest.approx(65.74)
    assert record["regret_glue_points"] == pytest.approx(75.13 - 65.74)
    found = run_cli("query", "--benchmark", "bert", "--recipe", json.dumps(record["architecture"]), "--json")
    assert json.loads(found.stdout)["id"] == 60            # the first of the two rows
    from benchmarks.core.registry import load_benchmark

    bert = load_benchmark("bert")
    evaluated = set(architectures(bert.search))
    rng = np.random.default_rng(0)
    arch = next(a for a in (bert.search.space.random(rng) for _ in range(100)) if a not in evaluated)
    missing = run_cli("query", "--benchmark", "bert", "--recipe", json.dumps(to_configuration(arch)), "--json")
    answer = json.loads(missing.stdout)
    assert missing.returncode == 1 and answer["found"] is False
    distances = hamming(np.array([bert.search.space.encode(a) for a in architectures(bert.search)]),
                        bert.search.space.encode(arch))
    assert answer["hamming_distance"] == distances.min() > 0


def test_cli_run_all_on_bert_with_defaults(tmp_path):
    result = run_cli("run", "--algo", "all", "--benchmark", "bert", "--trials", "1", "--budget-hours", "2",
                     "--out", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    labels = sorted(p.name for p in (tmp_path / "bert").iterdir() if not p.name.startswith("."))
    assert labels == ["bo", "re", "rs", "smac", "tpe"]       # one algorithm set for every benchmark
    record = json.loads((tmp_path / "bert" / "rs" / "trial-0.json").read_text())
    assert record["budget_s"] == 2 * 3600.0 and record["benchmark"] == "bert"


def test_missing_or_corrupt_bert_files_are_one_line_errors(tmp_path):
    missing = run_cli("data", "info", "--benchmark", "bert", "--data-dir", str(tmp_path))
    assert missing.returncode == 2 and "not found in" in missing.stderr      # a named folder: no fallback
    (tmp_path / "BERT_benchmark.json").write_text("{not json")
    (tmp_path / "BERT_search_space.json").write_text((bert_data_dir() / "BERT_search_space.json").read_text())
    corrupt = run_cli("run", "--algo", "rs", "--benchmark", "bert", "--data-dir", str(tmp_path),
                      "--out", str(tmp_path / "out"))
    assert corrupt.returncode == 2 and "cannot read" in corrupt.stderr
    for result in (missing, corrupt):
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
