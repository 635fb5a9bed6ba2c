"""The recipe network: benchmark cells compute their hand-written equations; parameter counts match the logs."""
import numpy as np
import pytest

from benchmarks.core.errors import UserError
from benchmarks.proxies.cell_graph import cell_graph, model_param_count

torch = pytest.importorskip("torch")

RNN_ID, LSTM_ID, GRU_ID = 1000000, 1000001, 1000002
IN, HID, STEPS, BATCH = 5, 4, 6, 3


def _recipe(ptb, rid):
    return ptb.search.recipe(ptb.search.index_of(rid))


def _layer(recipe, seed=0):
    from benchmarks.proxies.network import RecipeRNN

    layer = RecipeRNN(cell_graph(recipe), IN, HID)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.uniform_(-0.8, 0.8, generator=generator)
    return layer


def _weights(layer, node):
    """(W_x, U_h, b) of a two-input linear node [x, other]."""
    lin = layer.cell._linear_of[node]
    assert len(lin.weights) == 2
    return lin.weights[0].detach(), lin.weights[1].detach(), lin.bias.detach()


def _inputs(seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(STEPS, BATCH, IN, generator=generator)


def _lin(w, x, u, h, b):
    return x @ w.T + h @ u.T + b


def test_rnn_recipe_is_elman_rnn_and_torch_rnncell(ptb):
    recipe = _recipe(ptb, RNN_ID)
    layer = _layer(recipe)
    xs = _inputs()
    with torch.no_grad():
        out, (h_last,) = layer(xs)
    w, u, b = _weights(layer, "f")
    h = torch.zeros(BATCH, HID)
    reference = torch.nn.RNNCell(IN, HID, nonlinearity="tanh")
    with torch.no_grad():
        reference.weight_ih.copy_(w)
        reference.weight_hh.copy_(u)
        reference.bias_ih.copy_(b)
        reference.bias_hh.zero_()
        h_torch = torch.zeros(BATCH, HID)
        for t in range(STEPS):
            h = torch.tanh(_lin(w, xs[t], u, h, b))
            h_torch = reference(xs[t], h_torch)
            assert torch.allclose(out[t], h, atol=1e-6)
            assert torch.allclose(out[t], h_torch, atol=1e-6)
    assert torch.allclose(h_last, h, atol=1e-6)


def test_lstm_recipe_computes_its_equations(ptb):
    """The benchmark's LSTM: i = tanh, j = sigm, f = sigm, o = tanh (as in its recipe);
    c' = f c + i j, h' = tanh(c') o."""
    recipe = _recipe(ptb, LSTM_ID)
    layer = _layer(recipe)
    xs = _inputs()
    with torch.no_grad():
        out, (h_last, c_last) = layer(xs)
        gates = {g: _weights(layer, g) for g in "ijfo"}
        h, c = torch.zeros(BATCH, HID), torch.zeros(BATCH, HID)
        for t in range(STEPS):
            pre = {g: _lin(w, xs[t], u, h, b) for g, (w, u, b) in gates.items()}
            i, j = torch.tanh(pre["i"]), torch.sigmoid(pre["j"])
            f, o = torch.sigmoid(pre["f"]), torch.tanh(pre["o"])
            c = f * c + i * j
            h = torch.tanh(c) * o
            assert torch.allclose(out[t], h, atol=1e-6)
    assert torch.allclose(h_last, h, atol=1e-6)
    assert torch.allclose(c_last, c, atol=1e-6)


def test_standard_lstm_recipe_matches_torch_lstmcell():
    """A recipe written as the textbook LSTM equals torch.nn.LSTMCell with the same weights."""
    recipe = {
        "i": {"op": "linear", "input": ["x", "h_prev_0"]}, "i_a": {"op": "activation_sigm", "input": ["i"]},
        "f": {"op": "linear", "input": ["x", "h_prev_0"]}, "f_a": {"op": "activation_sigm", "input": ["f"]},
        "g": {"op": "linear", "input": ["x", "h_prev_0"]}, "g_a": {"op": "activation_tanh", "input": ["g"]},
        "o": {"op": "linear", "input": ["x", "h_prev_0"]}, "o_a": {"op": "activation_sigm", "input": ["o"]},
        "fc": {"op": "elementwise_prod", "input": ["f_a", "h_prev_1"]},
        "ig": {"op": "elementwise_prod", "input": ["i_a", "g_a"]},
        "h_new_1": {"op": "elementwise_sum", "input": ["fc", "ig"]},
        "c_a": {"op": "activation_tanh", "input": ["h_new_1"]},
        "h_new_0": {"op": "elementwise_prod", "input": ["c_a", "o_a"]},
    }
    layer = _layer(recipe, seed=3)
    reference = torch.nn.LSTMCell(IN, HID)
    with torch.no_grad():
        reference.weight_ih.copy_(torch.cat([_weights(layer, g)[0] for g in "ifgo"]))
        reference.weight_hh.copy_(torch.cat([_weights(layer, g)[1] for g in "ifgo"]))
        reference.bias_ih.copy_(torch.cat([_weights(layer, g)[2] for g in "ifgo"]))
        reference.bias_hh.zero_()
        xs = _inputs(2)
        out, _ = layer(xs)
        h, c = torch.zeros(BATCH, HID), torch.zeros(BATCH, HID)
        for t in range(STEPS):
            h, c = reference(xs[t], (h, c))
            assert torch.allclose(out[t], h, atol=1e-6)


def test_gru_recipe_computes_its_equations(ptb):
    """r = sigm, z = sigm, h~ = tanh(W x + U (r h) + b), h' = z h + (1 - z) h~ (blend)."""
    recipe = _recipe(ptb, GRU_ID)
    layer = _layer(recipe)
    xs = _inputs()
    with torch.no_grad():
        out, (h_last,) = layer(xs)
        (wr, ur, br), (wz, uz, bz), (wh, uh, bh) = (_weights(layer, n) for n in ("r", "z", "h_tilde"))
        h = torch.zeros(BATCH, HID)
        for t in range(STEPS):
            r = torch.sigmoid(_lin(wr, xs[t], ur, h, br))
            z = torch.sigmoid(_lin(wz, xs[t], uz, h, bz))
            h_tilde = torch.tanh(_lin(wh, xs[t], uh, r * h, bh))
            h = z * h + (1 - z) * h_tilde
            assert torch.allclose(out[t], h, atol=1e-6)
    assert torch.allclose(h_last, h, atol=1e-6)


def test_three_input_linear_and_leaky_relu():
    recipe = {"a": {"op": "linear", "input": ["x", "h_prev_0", "h_prev_1"]},
              "h_new_1": {"op": "activation_leaky_relu", "input": ["a"]},
              "h_new_0": {"op": "elementwise_sum", "input": ["h_new_1", "h_prev_0"]}}
    layer = _layer(recipe, seed=5)
    lin = layer.cell._linear_of["a"]
    w, u1, u2, b = (p.detach() for p in (*lin.weights, lin.bias))
    xs = _inputs(4)
    with torch.no_grad():
        out, _ = layer(xs)
        h0, h1 = torch.zeros(BATCH, HID), torch.zeros(BATCH, HID)
        for t in range(STEPS):
            a = xs[t] @ w.T + h0 @ u1.T + h1 @ u2.T + b
            h1 = torch.where(a > 0, a, 0.01 * a)
            h0 = h1 + h0
            assert torch.allclose(out[t], h0, atol=1e-5)


def test_baseline_parameter_counts_match_logs(ptb):
    from benchmarks.proxies.minibatch import load_corpus
    from benchmarks.proxies.network import RecipeLanguageModel, count_parameters

    vocab = load_corpus("ptb").vocab_size
    assert vocab == 10000
    expected = {RNN_ID: 5_731_600, LSTM_ID: 10_896_400, GRU_ID: 9_174_800}
    for rid, count in expected.items():
        row = ptb.search.index_of(rid)
        assert ptb.search.num_params[row] == count
        model = RecipeLanguageModel(ptb.search.recipe(row), vocab)
        assert count_parameters(model) == count
        assert model_param_count(ptb.search.recipe(row), vocab) == count


def test_random_cells_parameter_counts_match_logs(ptb):
    """Built models for a few random cells and the analytic count for 400 random cells equal num_params."""
    from benchmarks.proxies.network import RecipeLanguageModel, count_parameters

    rng = np.random.default_rng(20240601)
    rows = rng.choice(ptb.search.n, size=400, replace=False)
    wrong = [int(ptb.search.ids[r]) for r in rows
             if model_param_count(ptb.search.recipe(r), 10000) != ptb.search.num_params[r]]
    assert wrong == []
    for r in rows[:6]:
        model = RecipeLanguageModel(ptb.search.recipe(r), 10000)
        assert count_parameters(model) == ptb.search.num_params[r]


def test_partial_model_has_the_same_first_layers():
    from benchmarks.proxies.network import RecipeLanguageModel

    recipe = {"f": {"op": "linear", "input": ["x", "h_prev_0"]}, "h_new_0": {"op": "activation_tanh", "input": ["f"]}}
    full = RecipeLanguageModel(recipe, 13, embed_size=3, hidden_size=4, seed=7)
    part = RecipeLanguageModel(recipe, 13, embed_size=3, hidden_size=4, seed=7, build_layers=1)
    assert len(part.layers) == 1
    assert torch.equal(full.embedding, part.embedding)
    for a, b in zip(full.layers[0].parameters(), part.layers[0].parameters()):
        assert torch.equal(a, b)
    other = RecipeLanguageModel(recipe, 13, embed_size=3, hidden_size=4, seed=8)
    assert not torch.equal(full.embedding, other.embedding)


@pytest.mark.parametrize("recipe, message", [
    ({}, "non-empty"),
    ({"h_new_0": {"op": "conv", "input": ["x"]}}, "unknown op"),
    ({"h_new_0": {"op": "blend", "input": ["x", "x"]}}, "takes"),
    ({"a": {"op": "activation_tanh", "input": ["x"]}}, "h_new_0"),
    ({"h_new_0": {"op": "activation_tanh", "input": ["zz"]}}, "not defined"),
    ({"h_new_0": {"op": "activation_tanh", "input": ["h_prev_1"]}}, "hidden state"),
    ({"a": {"op": "activation_tanh", "input": ["h_new_0"]},
      "h_new_0": {"op": "activation_tanh", "input": ["a"]}}, "cycle"),
])
def test_bad_recipes_are_user_errors(recipe, message):
    with pytest.raises(UserError, match=message):
        cell_graph(recipe)
