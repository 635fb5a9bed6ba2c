"""One algorithm, every benchmark: search spaces state what they offer, algorithms what they need."""
import json
import os
import sys

import numpy as np
import pytest

from benchmarks.core.errors import UserError
from benchmarks.core.space import Snapper, architectures, encodings, hyperopt_space

import cli_process


def test_catalog_offers_match_the_spaces(ptb, bert):
    from benchmarks.core.catalog import BENCHMARKS

    for benchmark in (ptb, bert):
        spec = BENCHMARKS[benchmark.name]
        assert benchmark.search.space.offers <= spec.offers
        assert benchmark.search.space.encoding_kind == spec.encoding_kind
    assert "epochs" in BENCHMARKS["ptb"].offers and "epochs" not in BENCHMARKS["bert"].offers


def test_cell_space_operations_on_real_cells(ptb):
    from benchmarks.cells.canonical import canonical_hash
    from benchmarks.cells.recipe import is_valid

    space, rng = ptb.search.space, np.random.default_rng(0)
    cells = architectures(ptb.search)
    for row in rng.choice(ptb.search.n, 100, replace=False):
        cell = cells[row]
        child = space.mutate(cell, rng)
        assert child != cell and is_valid(child, strict=True)
        assert child in space.neighbours(cell)
        # every valid cell has a configuration that builds it again (up to node names)
        assert canonical_hash(space.from_values(space.to_values(cell))) == canonical_hash(cell)
    assert is_valid(space.sample(rng), strict=True)
    matrix = encodings(ptb.search)
    assert matrix.shape == (ptb.search.n, 80) and not matrix.flags.writeable
    lstm = ptb.search.index_of(1000001)
    assert np.array_equal(matrix[lstm], space.encode(cells[lstm]))


def test_cell_configspace_builds_cells_that_snap(wt2):
    space, rng = wt2.search.space, np.random.default_rng(1)
    cs = space.configuration_space(seed=3)
    snapper = Snapper(space, encodings(wt2.search), rng)
    rows = [snapper.snap(space.from_configuration(config)) for config in cs.sample_configuration(50)]
    assert len(set(rows)) == 50                      # each snap takes a new evaluated cell
    assert all(d >= 0 for d in snapper.distances)
    assert "~n_nodes" in hyperopt_space(space.choices())


def test_flexibert_neighbours_are_one_change_away(bert):
    from benchmarks.flexibert.space import hamming

    space = bert.search.space
    arch = architectures(bert.search)[0]
    for other in space.neighbours(arch):
        assert other != arch and space.validate(other) is other
    assert len({a.to_json() for a in space.neighbours(arch)}) == len(space.neighbours(arch))
    rng = np.random.default_rng(0)
    assert hamming(space.encode(arch)[None, :], space.encode(space.mutate(arch, rng)))[0] > 0


@pytest.mark.parametrize("name", ["rs", "bo", "re", "tpe", "smac", "optuna"])
def test_the_old_bert_names_are_refused_with_the_one_name(name, tmp_path):
    """One name per algorithm: `bert-re` is refused with `re` (which runs the same code on bert), in one
    line, before anything is written; never a second row for the same code."""
    from optimizers.registry import make_algorithm, parse_algo_list

    for call in (lambda: make_algorithm(f"bert-{name}"), lambda: make_algorithm(f"bert-{name}", None, "bert"),
                 lambda: parse_algo_list(f"bert-{name}", "bert")):
        with pytest.raises(UserError, match=f"'bert-{name}' is an old name: use --algo {name} "):
            call()


def test_re_mutates_natively_with_the_cell_encoding(ptb):
    """The same `re` class searches ptb's native space when its features name the space's encoding."""
    from nasbench_cli.harness.trial import run_algorithm
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm("re", {"features": "cell-encoding", "population": "5", "sample": "3"}, "ptb")
    env = run_algorithm(ptb.search, algorithm, 0, 100 * 3600.0, encodings(ptb.search))
    assert algorithm._native and len(env.history.arch) > 10
    assert len(set(env.history.arch)) == len(env.history.arch)


def test_refusals_say_what_is_missing():
    from optimizers.registry import check_benchmark, make_algorithm

    with pytest.raises(UserError, match="hb cannot run on bert: it needs epochs"):
        check_benchmark("hb", "bert")
    with pytest.raises(UserError, match="on bert use: .*re"):
        check_benchmark("bo50d", "bert")
    with pytest.raises(UserError, match="use --algo tpe"):
        make_algorithm("bert-tpe", None, "wt2")
    assert type(make_algorithm("re", None, "ptb")).__name__ == "RegularizedEvolution"
    assert type(make_algorithm("re", None, "bert")).__name__ == "SpaceRegularizedEvolution"
    assert make_algorithm("bo", None, "bert").feature_kind == "bert-encoding"


PLUGIN = '''
from dataclasses import dataclass
from nasbench import Algorithm, Job

class WantsGraph2vec(Algorithm):
    name = "wants-g2v"
    @dataclass(frozen=True)
    class Settings:
        features: str = "g2v-10d"
    def ask(self):
        return None
'''


def test_a_plugin_needing_graph2vec_is_refused_on_bert_in_one_line(tmp_path):
    (tmp_path / "plug.py").write_text(PLUGIN)
    run = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", f"{tmp_path}/plug.py:WantsGraph2vec",
                          "--benchmark", "bert", "--trials", "1", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, env={**os.environ})
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "it needs graph2vec" in run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.json"))


EXAMPLES = [("examples/successive_halving.py:SuccessiveHalving", "ptb", "60"),
            ("examples/local_search.py:LocalSearch", "bert", "24"),
            ("examples/optuna_plugin.py:OptunaSpaceTPE", "wt2", "60")]


@pytest.mark.parametrize("spec,benchmark,hours", EXAMPLES)
def test_the_example_plugins_run(tmp_path, spec, benchmark, hours):
    if "optuna" in spec:
        pytest.importorskip("optuna")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--algo", spec, "--benchmark", benchmark,
                          "--trials", "2", "--budget-hours", hours, "--out", str(tmp_path), "--json"],
                         capture_output=True, text=True, cwd=root, env={**os.environ})
    assert run.returncode == 0, run.stderr
    files = sorted(tmp_path.rglob("trial-*.json"))
    assert len(files) == 2
    for path in files:
        record = json.loads(path.read_text())
        assert record["n_evaluations"] > 5 and record["final_regret"] >= 0
        assert len(set(zip(record["trajectory"]["arch"], record["trajectory"]["epochs"]))) == record["n_evaluations"]


def test_a_builtin_set_to_graph2vec_features_is_refused_on_bert():
    """Settings add to what an algorithm needs: tpe over g2v-10d cannot run on bert (refused before any
    feature build starts)."""
    from optimizers.registry import make_algorithm

    with pytest.raises(UserError, match="tpe cannot run on bert: it needs graph2vec"):
        make_algorithm("tpe", {"features": "g2v-10d"}, "bert")
