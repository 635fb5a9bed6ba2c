"""Canonical form and hash: invariances, sensitivities, baselines and lookup on the real benchmark."""
import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.cells import canonical as C
from benchmarks.cells.baseline_cells import BASELINES, baseline_cell, baseline_id, gru_recipe, lstm_recipe, rnn_recipe
from benchmarks.cells.generator import sample_cells
from benchmarks.cells.recipe import COMMUTATIVE, InvalidCellError, parse_cell

FIXED = re.compile(r"x|h_prev_\d+|h_new_\d+")


def disguise(recipe: dict, rng: random.Random) -> dict:
    """Same cell: intermediate nodes renamed at random, commutative inputs and node order shuffled."""
    names = [n for n in recipe if not FIXED.fullmatch(n)]
    fresh = rng.sample(range(10 ** 6), len(names))
    rename = {old: f"v{k}_{rng.choice('abcdefgh')}" for old, k in zip(names, fresh)}
    out = {}
    for name, spec in recipe.items():
        inputs = [rename.get(i, i) for i in spec["input"]]
        if spec["op"] in COMMUTATIVE:
            rng.shuffle(inputs)
        out[rename.get(name, name)] = {"op": spec["op"], "input": inputs}
    items = list(out.items())
    rng.shuffle(items)
    return dict(items)


def random_cell_recipe(seed: int) -> dict:
    return sample_cells(1, seed=seed)[0].to_recipe()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10 ** 6), shuffle_seed=st.integers(0, 10 ** 6))
def test_hash_ignores_names_and_commutative_input_order(seed, shuffle_seed):
    recipe = random_cell_recipe(seed)
    other = disguise(recipe, random.Random(shuffle_seed))
    assert C.canonical_hash(other) == C.canonical_hash(recipe)
    assert C.canonical_form(other) == C.canonical_form(recipe)


SWAPS = {"activation_tanh": "activation_sigm", "activation_sigm": "activation_leaky_relu",
         "activation_leaky_relu": "activation_tanh", "elementwise_sum": "elementwise_prod",
         "elementwise_prod": "elementwise_sum"}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10 ** 6), pick=st.integers(0, 10 ** 6))
def test_changing_an_op_changes_the_hash(seed, pick):
    recipe = random_cell_recipe(seed)
    candidates = sorted(n for n, spec in recipe.items() if spec["op"] in SWAPS)
    if not candidates:
        return
    name = candidates[pick % len(candidates)]
    changed = json.loads(json.dumps(recipe))
    changed[name]["op"] = SWAPS[recipe[name]["op"]]
    assert C.canonical_hash(changed) != C.canonical_hash(recipe)


def test_blend_input_order_matters():
    gru = gru_recipe()
    base = C.canonical_hash(gru)
    for order in ([1, 0, 2], [0, 2, 1], [2, 1, 0]):
        swapped = json.loads(json.dumps(gru))
        swapped["h_new_0"]["input"] = [gru["h_new_0"]["input"][k] for k in order]
        assert C.canonical_hash(swapped) != base, order


def test_blend_swaps_on_benchmark_cells_change_the_hash(ptb):
    """Swapping a blend's two blended inputs changes the hash whenever it changes the tree unfolding."""
    checked = 0
    for row in range(0, ptb.search.n, 7):
        recipe = ptb.search.recipe(row)
        for name, spec in recipe.items():
            if spec["op"] == "blend" and checked < 150:
                swapped = json.loads(json.dumps(recipe))
                z, a, b = spec["input"]
                swapped[name]["input"] = [z, b, a]
                if C.tree_hash(swapped) != C.tree_hash(recipe):
                    assert C.canonical_hash(swapped) != C.canonical_hash(recipe), (int(ptb.search.ids[row]), name)
                    checked += 1
    assert checked == 150


def test_sharing_matters_but_duplicated_parameter_free_nodes_do_not():
    shared = {"l": {"op": "linear", "input": ["x", "h_prev_0"]},
              "p": {"op": "elementwise_prod", "input": ["h_prev_0", "l"]},
              "h_new_0": {"op": "elementwise_prod", "input": ["l", "p"]}}
    two_linears = {"l1": {"op": "linear", "input": ["x", "h_prev_0"]},
                   "l2": {"op": "linear", "input": ["h_prev_0", "x"]},
                   "p": {"op": "elementwise_prod", "input": ["h_prev_0", "l2"]},
                   "h_new_0": {"op": "elementwise_prod", "input": ["l1", "p"]}}
    assert C.tree_hash(shared) == C.tree_hash(two_linears)        # same tree unfolding...
    assert C.canonical_hash(shared) != C.canonical_hash(two_linears)  # ...different weights
    one_tanh = {"l": {"op": "linear", "input": ["x", "h_prev_0"]}, "t": {"op": "activation_tanh", "input": ["l"]},
                "h_new_0": {"op": "elementwise_sum", "input": ["t", "t"]}}
    two_tanh = {"l": {"op": "linear", "input": ["x", "h_prev_0"]}, "t": {"op": "activation_tanh", "input": ["l"]},
                "u": {"op": "activation_tanh", "input": ["l"]}, "h_new_0": {"op": "elementwise_sum", "input": ["u", "t"]}}
    assert C.canonical_hash(one_tanh) == C.canonical_hash(two_tanh)   # tanh(l) twice is one value


def test_carried_hidden_slots_are_interchangeable_but_slot_0_is_not():
    cell = {"a": {"op": "linear", "input": ["x", "h_prev_0", "h_prev_1"]}, "h_new_0": {"op": "activation_tanh", "input": ["a"]},
            "b": {"op": "linear", "input": ["x", "h_prev_2"]}, "h_new_1": {"op": "activation_sigm", "input": ["b"]},
            "h_new_2": {"op": "activation_tanh", "input": ["b"]}}
    swap12 = {"1": "2", "2": "1"}

    def relabel(recipe, mapping):
        fix = lambda n: re.sub(r"(h_new_|h_prev_)(\d)", lambda m: m.group(1) + mapping.get(m.group(2), m.group(2)), n)
        return {fix(k): {"op": v["op"], "input": [fix(i) for i in v["input"]]} for k, v in recipe.items()}

    assert C.canonical_hash(relabel(cell, swap12)) == C.canonical_hash(cell)
    assert C.canonical_hash(relabel(cell, {"0": "1", "1": "0"})) != C.canonical_hash(cell)


def test_canonical_form_is_a_fixed_point_with_the_same_hash(ptb):
    for row in range(0, ptb.search.n, 97):
        form = C.canonical_form(ptb.search.recipes[row])
        assert C.canonical_form(form) == form
        assert C.canonical_hash(form) == C.canonical_hash(ptb.search.recipes[row])
        assert all(FIXED.fullmatch(n) or re.fullmatch(r"node_\d+", n) for n in form)


def test_invalid_cells_are_not_hashed():
    with pytest.raises(InvalidCellError):
        C.canonical_hash({"h_new_0": {"op": "linear", "input": ["x"]}})     # h_prev_0 unused
    assert C.hash_or_none({"h_new_0": {"op": "linear", "input": ["h_new_0", "x"]}}) is None


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_baselines_match_the_benchmark(ptb, name):
    rid = baseline_id(name)
    assert C.canonical_hash(baseline_cell(name)) == C.canonical_hash(ptb.search.recipe(ptb.search.index_of(rid)))
    assert C.lookup(ptb, baseline_cell(name)) == rid


def test_baselines_are_written_independently():
    """Hand-written recipes use other names than the released ones (so the match is not a copy)."""
    for build, rid in BASELINES.values():
        names = set(build()) - {"h_new_0", "h_new_1"}
        assert names and not names & {"f", "i", "j", "o", "r", "z", "rh", "h_tilde", "i_act", "f_act"}
    textbook = lstm_recipe()
    textbook["out_gate"]["op"] = "activation_sigm"      # the usual LSTM output gate
    assert C.canonical_hash(textbook) != C.canonical_hash(lstm_recipe())


@settings(max_examples=15, deadline=None)
@given(shuffle_seed=st.integers(0, 10 ** 6))
def test_renamed_lstm_is_found_as_1000001(ptb, tmp_path_factory, shuffle_seed):
    disguised = disguise(ptb.search.recipe(ptb.search.index_of(1000001)), random.Random(shuffle_seed))
    cell, found = C.lookup_recipe(ptb, json.dumps(disguised))
    assert found == 1000001 and cell == parse_cell(disguised)
    path = tmp_path_factory.mktemp("lstm") / "cell.json"
    path.write_text(json.dumps(disguised))
    assert C.lookup_recipe(ptb, str(path))[1] == 1000001


def test_lookup_misses_and_errors(ptb):
    textbook = lstm_recipe()
    textbook["out_gate"]["op"] = "activation_sigm"
    assert C.lookup(ptb, textbook) is None and C.lookup_all(ptb, textbook) == ()
    with pytest.raises(InvalidCellError):
        C.lookup_recipe(ptb, '{"h_new_0": {"op": "tanh", "input": ["x"]}}')
    rnn_ids = C.lookup_all(ptb, rnn_recipe())
    assert rnn_ids[0] == 1000000 and len(rnn_ids) > 1 and list(rnn_ids) == sorted(rnn_ids)


def test_find_duplicates_on_lists_and_mappings():
    rnn = rnn_recipe()
    recipes = [rnn, lstm_recipe(), disguise(rnn, random.Random(1)), json.dumps(rnn), gru_recipe()]
    assert C.find_duplicates(recipes) == [[0, 2, 3]]
    assert C.find_duplicates({"b": rnn, "a": json.dumps(rnn), "c": gru_recipe()}) == [["a", "b"]]


def test_benchmark_duplicates_have_equal_parameter_counts(ptb):
    hashes = C.benchmark_hashes(ptb)
    assert len(hashes) == ptb.search.n and None not in hashes
    params: dict[str, set] = {}
    for h, n in zip(hashes, ptb.search.num_params):
        params.setdefault(h, set()).add(int(n))
    # equal canonical forms build equal networks, so the logs must report equal parameter counts
    assert all(len(p) == 1 for p in params.values())
    summary = C.duplicate_summary(ptb)
    assert summary["distinct_canonical_forms"] == len(params) < ptb.search.n
    assert summary["architectures_in_duplicate_groups"] - summary["duplicate_groups"] == \
        summary["redundant_architectures"] == ptb.search.n - len(params)


def test_hash_index_is_cached_on_disk(ptb):
    from benchmarks.core.paths import cache_dir

    C.benchmark_hashes(ptb)
    files = list((cache_dir() / "cell_hashes").glob("ptb-*.json"))
    assert len(files) == 1
    memo = dict(C._MEMO)
    C._MEMO.clear()
    try:
        assert C.benchmark_hashes(ptb) == memo[files[0].stem][0]
    finally:
        C._MEMO.update(memo)


def test_space_show_command(ptb, data_dir):
    from click.testing import CliRunner

    from nasbench_cli.commands.space import space

    runner = CliRunner()
    shown = runner.invoke(space, ["show", "1000001", "--data-dir", str(data_dir)])
    assert shown.exit_code == 0, shown.output
    assert "h_new_0 = elementwise_prod(h_new_1_act, o_act)" in shown.output
    assert C.canonical_hash(lstm_recipe()) in shown.output
    lines = [l.strip() for l in shown.output.splitlines() if " = " in l]
    assert lines.index("h_new_1 = elementwise_sum(h_new_1_part1, h_new_1_part2)") < \
        lines.index("h_new_1_act = activation_tanh(h_new_1)")
    by_recipe = runner.invoke(space, ["show", "--json", "--recipe", json.dumps(lstm_recipe()),
                                      "--data-dir", str(data_dir)])
    assert by_recipe.exit_code == 0
    assert json.loads(by_recipe.output)["same_canonical_form_ids"] == [1000001]
    assert runner.invoke(space, ["show", "--data-dir", str(data_dir)]).exit_code != 0


def test_space_stats_command(wt2, data_dir):
    from click.testing import CliRunner

    from nasbench_cli.commands.space import space

    result = CliRunner().invoke(space, ["stats", "--benchmark", "wt2", "--json", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["architectures"] == wt2.search.n == report["valid"]
    assert report["violations"]["direct_hidden"] == 1 and report["violating_ids"]["direct_hidden"] == [1000002]
    assert sum(int(v) for v in report["hidden_states"].values()) == wt2.search.n
