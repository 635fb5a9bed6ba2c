"""Our graph2vec: WL documents are invariant to node renaming, embeddings are deterministic."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.core.errors import UserError
from benchmarks.cells.graph2vec import ORDERED_OPS, build_graph2vec, cell_document

REPO = Path(__file__).resolve().parent.parent
SUBSET = 200          # cells embedded per determinism test (the full set takes a minute or more)


def _rename(cell: dict, rng: np.random.Generator) -> dict:
    """`cell` with internal nodes renamed, dict order shuffled and unordered inputs permuted."""
    internal = [name for name in cell if not name.startswith("h_new_")]
    new_names = {name: f"renamed_{k}" for k, name in enumerate(rng.permutation(internal))}
    rename = lambda name: new_names.get(name, name)  # noqa: E731
    out = {}
    for name in rng.permutation(list(cell)):
        node = cell[name]
        inputs = [rename(i) for i in node["input"]]
        if node["op"] not in ORDERED_OPS:
            inputs = [inputs[k] for k in rng.permutation(len(inputs))]
        out[rename(name)] = {"op": node["op"], "input": inputs}
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(0, 14321), seed=st.integers(0, 2**31))
def test_document_invariant_to_node_renaming(ptb, row, seed):
    cell = ptb.search.recipe(row % ptb.search.n)
    renamed = _rename(cell, np.random.default_rng(seed))
    assert cell_document(renamed) == cell_document(cell)
    assert cell_document(json.dumps(renamed)) == cell_document(cell)


def test_document_sees_ops_outputs_and_blend_order(ptb):
    lstm = ptb.search.recipe(ptb.search.index_of(1000001))
    doc = cell_document(lstm)
    changed = json.loads(json.dumps(lstm))
    changed["i_act"]["op"] = "activation_leaky_relu"
    assert cell_document(changed) != doc
    assert any(w.startswith("0_h_new_0:") for w in doc) and any(w.startswith("0_h_new_1:") for w in doc)
    # blend(z, a, b) is order-sensitive: swapping its gate and an input changes the document
    blends = [i for i in range(2000) if any(n["op"] == "blend" and len(set(n["input"])) == 3
                                           for n in ptb.search.recipe(i).values())]
    assert blends, "expected blend cells among the first 2000 PTB rows"
    cell = ptb.search.recipe(blends[0])
    name = next(k for k, n in cell.items() if n["op"] == "blend" and len(set(n["input"])) == 3)
    swapped = json.loads(json.dumps(cell))
    swapped[name]["input"] = [cell[name]["input"][1], cell[name]["input"][0], cell[name]["input"][2]]
    words = lambda c: [w for w in cell_document(c) if not w.startswith("0_")]  # noqa: E731
    assert words(swapped) != words(cell)


def test_same_seed_same_vectors_other_seed_differs(ptb):
    recipes = ptb.search.recipes[:SUBSET]
    first = build_graph2vec(recipes, 10, seed=3, epochs=10)
    again = build_graph2vec(recipes, 10, seed=3, epochs=10)
    other = build_graph2vec(recipes, 10, seed=4, epochs=10)
    assert first.shape == (SUBSET, 10) and first.dtype == np.float64 and np.isfinite(first).all()
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, other)


def test_vectors_do_not_depend_on_pythonhashseed(ptb, tmp_path):
    recipes = ptb.search.recipes[:80]
    (tmp_path / "recipes.json").write_text(json.dumps(recipes))
    script = ("import json, sys, numpy as np; from benchmarks.cells.graph2vec import build_graph2vec; "
              "r = json.load(open(sys.argv[1])); np.save(sys.argv[2], build_graph2vec(r, 8, seed=1, epochs=5))")
    hash_seed = "321" if os.environ.get("PYTHONHASHSEED") == "123" else "123"   # differs from ours
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(REPO))
    out = tmp_path / "vectors.npy"
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "recipes.json"), str(out)],
                   check=True, env=env, cwd=REPO)
    np.testing.assert_array_equal(np.load(out), build_graph2vec(recipes, 8, seed=1, epochs=5))


def test_bad_input_is_a_user_error(ptb):
    with pytest.raises(UserError):
        build_graph2vec(ptb.search.recipes[:5], 0)
    with pytest.raises(UserError):
        build_graph2vec([], 10)
    with pytest.raises(UserError):
        cell_document("{not json")
    with pytest.raises(UserError):
        cell_document({"h_new_0": {"op": "linear", "input": ["nowhere"]}})
    with pytest.raises(UserError):
        cell_document({"h_new_0": {"input": ["x"]}})
