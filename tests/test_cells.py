"""The cell model and its validity rules: one minimal bad cell per rule, and every real recipe."""
import json

import pytest

from benchmarks.cells.recipe import (MAX_NODES, RULES, Cell, InvalidCellError, Node, find_cycle, is_valid, parse_cell,
                              validate, violations)
from benchmarks.core.errors import UserError


def lin(*inputs):
    return {"op": "linear", "input": list(inputs)}


def op(name, *inputs):
    return {"op": name, "input": list(inputs)}


RNN = {"f": lin("x", "h_prev_0"), "h_new_0": op("activation_tanh", "f")}


def chain(n_nodes: int) -> dict:
    """A valid single-state cell of exactly n_nodes nodes (n_nodes >= 2)."""
    recipe = {"n0": lin("x", "h_prev_0")}
    for k in range(1, n_nodes - 1):
        recipe[f"n{k}"] = op("activation_tanh", f"n{k - 1}") if k % 2 else lin(f"n{k - 1}")
    recipe["h_new_0"] = op("activation_sigm", f"n{n_nodes - 2}")
    return recipe


def four_states() -> dict:
    recipe = {}
    for i in range(4):
        recipe[f"l{i}"] = lin("x", f"h_prev_{i}")
        recipe[f"h_new_{i}"] = op("activation_tanh", f"l{i}")
    return recipe


# rule -> (minimal cell breaking it, node the error must name or None)
BAD = {
    "format": ({"f": {"op": "linear"}, "h_new_0": op("activation_tanh", "f")}, "f"),
    "unknown_op": ({"f": lin("x", "h_prev_0"), "h_new_0": op("activation_relu", "f")}, "h_new_0"),
    "arity": ({"f": lin("x", "h_prev_0"), "h_new_0": op("blend", "f", "h_prev_0")}, "h_new_0"),
    "reserved_name": ({"f": lin("x", "h_prev_0"), "x": op("activation_tanh", "f"),
                       "h_new_0": op("activation_tanh", "f")}, "x"),
    "undefined_input": ({"f": lin("x", "h_prev_0"), "h_new_0": op("elementwise_sum", "f", "g")}, "h_new_0"),
    "hidden_mismatch": ({"f": lin("x", "h_prev_0", "h_prev_1"), "h_new_0": op("activation_tanh", "f")}, "f"),
    "missing_output": ({"f": lin("x", "h_prev_0", "h_prev_1"), "h_new_1": op("activation_tanh", "f")}, "h_new_0"),
    "too_many_hidden": (four_states(), None),
    "too_many_nodes": (chain(MAX_NODES + 1), None),
    "cycle": ({"a": lin("x", "h_prev_0", "b"), "b": op("activation_tanh", "a"),
               "h_new_0": op("activation_tanh", "b")}, None),
    "dead_node": (dict(RNN, spare=op("activation_sigm", "f")), "spare"),
    "unused_input": ({"f": lin("h_prev_0"), "h_new_0": op("activation_tanh", "f")}, "x"),
}


def test_every_rule_has_a_bad_cell():
    assert set(BAD) | {"direct_hidden"} == set(RULES)


@pytest.mark.parametrize("rule", sorted(BAD))
def test_minimal_bad_cell_is_rejected_with_its_rule(rule):
    recipe, node = BAD[rule]
    with pytest.raises(InvalidCellError) as info:
        validate(recipe)
    assert info.value.rule == rule
    assert isinstance(info.value, UserError)
    if node is not None:
        assert info.value.node == node
        assert f"'{node}'" in str(info.value)
    assert rule in {v.rule for v in violations(recipe)}
    assert not is_valid(recipe)


@pytest.mark.parametrize("name,inputs", [("linear", 0), ("linear", 4), ("elementwise_prod", 1),
                                         ("elementwise_sum", 3), ("activation_sigm", 2), ("blend", 2)])
def test_arity_of_each_op(name, inputs):
    names = ["x", "h_prev_0", "a", "b"][:inputs] if inputs <= 4 else []
    recipe = {"a": lin("x", "h_prev_0"), "b": op("activation_tanh", "a"),
              "h_new_0": {"op": name, "input": names}}
    found = [v for v in violations(recipe) if v.rule == "arity"]
    assert [v.node for v in found] == ["h_new_0"]


def test_node_limit_counts_defined_nodes_only():
    validate(chain(MAX_NODES))              # 24 nodes + x + h_prev_0 = 26 names: allowed
    assert [v.rule for v in violations(chain(MAX_NODES + 1))] == ["too_many_nodes"]


def test_cycle_is_named_in_order():
    recipe = BAD["cycle"][0]
    cycle = find_cycle(parse_cell(recipe))
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b"}
    with pytest.raises(InvalidCellError, match="a -> b -> a|b -> a -> b"):
        validate(recipe)
    with pytest.raises(InvalidCellError):
        parse_cell(recipe).topological_order()


def test_unused_hidden_state_and_direct_hidden():
    two = {"f": lin("x", "h_prev_0"), "h_new_0": op("activation_tanh", "f"), "h_new_1": op("activation_sigm", "f")}
    assert [(v.rule, v.node) for v in violations(two)] == [("unused_input", "h_prev_1")]
    gru_like = {"z": lin("x", "h_prev_0"), "zs": op("activation_sigm", "z"), "c": op("activation_tanh", "z"),
                "h_new_0": op("blend", "zs", "h_prev_0", "c")}
    validate(gru_like)                          # the benchmark's own GRU has this shape
    with pytest.raises(InvalidCellError) as info:
        validate(gru_like, strict=True)
    assert info.value.rule == "direct_hidden" and info.value.node == "h_new_0"


def test_parse_accepts_dict_json_path_and_cell(tmp_path):
    as_text = json.dumps(RNN)
    path = tmp_path / "rnn.json"
    path.write_text(as_text)
    cells = [parse_cell(RNN), parse_cell(as_text), parse_cell(f"  {as_text}\n"), parse_cell(path), parse_cell(str(path))]
    assert all(c == cells[0] for c in cells)
    assert parse_cell(cells[0]) is cells[0]
    assert cells[0].to_recipe() == RNN and json.loads(cells[0].to_json()) == RNN
    assert cells[0].n_hidden == 1 and cells[0].input_names == ["x", "h_prev_0"] and len(cells[0]) == 2


@pytest.mark.parametrize("bad", [
    "[1, 2]", "{not json", "no/such/file.json", 42, ["x"],
    {"f": {"op": "linear"}}, {"f": {"op": "linear", "input": "x"}}, {"f": {"op": 3, "input": ["x"]}},
    {"f": {"op": "linear", "inputs": ["x"]}}, {"f": ["linear", ["x"]]},
])
def test_malformed_recipes_raise_user_errors(bad):
    with pytest.raises(InvalidCellError):
        parse_cell(bad)
    assert [v.rule for v in violations(bad)] == ["format"]


def test_cell_is_immutable_and_hashable():
    cell = parse_cell(RNN)
    with pytest.raises(TypeError):
        cell.nodes["g"] = Node("linear", ("x",))
    assert {cell, parse_cell(dict(reversed(list(RNN.items()))))} == {cell}
    assert isinstance(cell, Cell)


def test_topological_order_keeps_recipe_order_for_ties():
    recipe = {"h_new_0": op("elementwise_sum", "b", "a"), "a": op("activation_tanh", "l"),
              "b": op("activation_sigm", "l"), "l": lin("x", "h_prev_0")}
    assert parse_cell(recipe).topological_order() == ["l", "a", "b", "h_new_0"]


def test_all_benchmark_recipes_validate(ptb, wt2):
    largest = {}
    for bench in (ptb, wt2):
        strict_breakers = []
        sizes, with_inputs = [], []
        for rid, text in zip(bench.search.ids, bench.search.recipes):
            cell = parse_cell(text)
            rules = {v.rule for v in violations(cell, strict=True)}
            assert rules <= {"direct_hidden"}, (int(rid), rules)
            if rules:
                strict_breakers.append(int(rid))
            sizes.append(len(cell))
            with_inputs.append(len(cell) + len(cell.input_names))
        # only the hand-written GRU wires h_prev_0 straight into h_new_0
        assert strict_breakers == [1000002]
        assert max(sizes) <= MAX_NODES
        largest[bench.name] = max(with_inputs)
    # the node limit cannot count x and h_prev_i: with them the largest PTB cell has > 24 names
    assert largest["ptb"] > MAX_NODES


def test_space_validate_command(tmp_path):
    from click.testing import CliRunner

    from nasbench_cli.commands.space import space

    runner = CliRunner()
    ok = runner.invoke(space, ["validate", json.dumps(RNN)])
    assert ok.exit_code == 0 and "valid" in ok.output
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD["dead_node"][0]))
    bad = runner.invoke(space, ["validate", str(path)])
    assert bad.exit_code == 2 and "dead_node" in bad.output and "'spare'" in bad.output
    as_json = runner.invoke(space, ["validate", "--json", "{oops"])
    assert as_json.exit_code == 2 and json.loads(as_json.output)["valid"] is False
