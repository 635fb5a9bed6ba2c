"""The random cell generator: valid, deterministic per seed, faithful to the released procedure."""
import json
import random

import pytest

from benchmarks.cells import canonical as C
from benchmarks.cells.generator import GeneratorConfig, generate_recipe, sample_cells, sample_cells_with_stats
from benchmarks.cells.recipe import ACTIVATIONS, MAX_HIDDEN, MAX_NODES, violations
from benchmarks.core.errors import UserError


@pytest.fixture(scope="module")
def drawn():
    return sample_cells_with_stats(400, seed=11)


def test_samples_validate_strictly(drawn):
    cells, stats = drawn
    assert len(cells) == 400
    assert all(violations(c, strict=True) == [] for c in cells)
    assert all(1 <= c.n_hidden <= MAX_HIDDEN and len(c) <= MAX_NODES for c in cells)
    assert {c.n_hidden for c in cells} == {1, 2, 3}
    # the sanity checks do reject raw graphs, and every attempt is accounted for
    assert stats["attempts"] > 400 and set(stats["rejected"]) <= {"direct_hidden", "unused_input", "too_many_nodes"}


def test_same_seed_same_cells_other_seed_other_cells():
    a = [c.to_recipe() for c in sample_cells(50, seed=5)]
    assert a == [c.to_recipe() for c in sample_cells(50, seed=5)]
    assert a != [c.to_recipe() for c in sample_cells(50, seed=6)]
    assert [c.to_recipe() for c in sample_cells(20, seed=5)] == a[:20]


def test_cells_follow_the_generator_wiring(drawn):
    """Linear nodes read x, h_prev_* or activations; blend/elementwise never read x; node names are slots."""
    for cell in drawn[0]:
        for name, node in cell.nodes.items():
            if node.op == "linear":
                assert 2 <= len(node.inputs) <= 3
                for i in node.inputs:
                    assert i == "x" or i.startswith("h_prev_") or cell.nodes[i].op in ACTIVATIONS
            elif node.op in ACTIVATIONS:
                assert cell.nodes[node.inputs[0]].op == "linear"
            else:
                assert "x" not in node.inputs
            assert name.startswith(("node_", "h_new_"))


def test_raw_graph_respects_the_slot_budget():
    rng = random.Random(0)
    for _ in range(200):
        k, inter = rng.choice([1, 2, 3]), rng.choice([7, 14, 21])
        raw = generate_recipe(rng, k, inter)
        slots = [int(n.split("_")[1]) for n in raw if n.startswith("node_")]
        assert max(slots, default=0) <= k + inter      # a final linear may take one extra slot for its activation
        assert all(f"h_new_{i}" in raw for i in range(k))


def test_unique_sampling_gives_distinct_canonical_forms():
    cells = sample_cells(150, seed=2, unique=True)
    assert len({C.canonical_hash(c) for c in cells}) == 150


def test_bad_arguments():
    with pytest.raises(UserError):
        sample_cells(-1)
    with pytest.raises(UserError):
        sample_cells(1, config=GeneratorConfig(hidden_sizes=(4,), max_attempts=20))   # 4 states never validate


def test_samples_reach_benchmark_architectures(ptb, drawn):
    hits = [c for c in drawn[0] if C.lookup(ptb, c) is not None]
    assert 0 < len(hits) < len(drawn[0])


def test_space_sample_command():
    from click.testing import CliRunner

    from nasbench_cli.commands.space import space

    runner = CliRunner()
    result = runner.invoke(space, ["sample", "-n", "4", "--seed", "9", "--json"])
    assert result.exit_code == 0, result.output
    recipes = json.loads(result.output)
    assert recipes == [c.to_recipe() for c in sample_cells(4, seed=9)]
    lines = runner.invoke(space, ["sample", "-n", "4", "--seed", "9"]).output.splitlines()
    assert [json.loads(line) for line in lines] == recipes
