"""Each training-free metric on a tiny model against a computation by hand (numpy, finite differences)."""
import math

import numpy as np
import pytest

from benchmarks.proxies import metrics as M

torch = pytest.importorskip("torch")

RNN = {"f": {"op": "linear", "input": ["x", "h_prev_0"]}, "h_new_0": {"op": "activation_tanh", "input": ["f"]}}
VOCAB, EMB, HID, T, B = 11, 3, 4, 4, 5
K = 1e-5


@pytest.fixture(scope="module")
def tiny():
    """A double-precision tiny macro model of the RNN recipe (3 -> 4 -> 4 -> 3), and a minibatch."""
    from benchmarks.proxies.network import RecipeLanguageModel

    model = RecipeLanguageModel(RNN, VOCAB, embed_size=EMB, hidden_size=HID, seed=3).double()
    with torch.no_grad():   # larger inputs than U(-0.1, 0.1), so that activation patterns differ
        model.embedding.uniform_(-3, 3, generator=torch.Generator().manual_seed(4))
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, VOCAB, size=(T, B)))
    return model, tokens


def _numpy_weights(model):
    out = []
    for layer in model.layers:
        lin = layer.cell.linears[0]
        out.append(tuple(p.detach().numpy().copy() for p in (lin.weights[0], lin.weights[1], lin.bias)))
    return out


def _hand_forward(weights, embedded):
    """h_t = tanh(W x_t + U h_{t-1} + b), layer after layer; returns each layer's states [T, B, H]."""
    states, current = [], embedded
    for w, u, b in weights:
        h = np.zeros((current.shape[1], w.shape[0]))
        seq = []
        for t in range(current.shape[0]):
            h = np.tanh(current[t] @ w.T + h @ u.T + b)
            seq.append(h)
        current = np.stack(seq)
        states.append(current)
    return states


def _paper_score(rows):
    """The authors' formula: eigenvalues (np.linalg.eig) of np.corrcoef(rows)."""
    v = np.linalg.eig(np.corrcoef(rows))[0].real
    return -np.sum(np.log(v + K) + 1.0 / (v + K))


def _embedded(model, tokens):
    return model.embedding.detach().numpy()[tokens.numpy()]


def test_hidden_covariance_matches_hand_computation(tiny):
    model, tokens = tiny
    scores = M.score_model(model, tokens, M.HIDDEN_METRICS)
    states = _hand_forward(_numpy_weights(model), _embedded(model, tokens))
    for layer, name in enumerate(M.HIDDEN_METRICS):
        rows = states[layer].reshape(-1, states[layer].shape[-1]).T     # units x samples
        assert scores[name] == pytest.approx(_paper_score(rows), rel=1e-8)


def test_activation_distance_matches_hamming_by_hand(tiny):
    model, tokens = tiny
    score = M.score_model(model, tokens, ("activation_distance",))["activation_distance"]
    # The RNN recipe has one activation node (h_new_0 = tanh): its codes at every step of every layer.
    codes = np.concatenate([(s > 0).transpose(1, 0, 2).reshape(B, -1)
                            for s in _hand_forward(_numpy_weights(model), _embedded(model, tokens))], axis=1)
    kernel = np.array([[np.sum(codes[i] == codes[j]) for j in range(B)] for i in range(B)], dtype=float)
    hamming = np.array([[np.sum(codes[i] != codes[j]) for j in range(B)] for i in range(B)])
    assert np.all(kernel + hamming == codes.shape[1])
    assert len({tuple(c) for c in codes}) == B          # distinct patterns: K is not singular
    assert score == pytest.approx(math.log(np.linalg.det(kernel)), rel=1e-9)


def _finite_difference_jacobian(weights, embedded, eps=1e-6):
    base = embedded.copy()
    jac = np.zeros_like(base)
    for idx in np.ndindex(*base.shape):
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        jac[idx] = (_hand_forward(weights, plus)[-1].sum() - _hand_forward(weights, minus)[-1].sum()) / (2 * eps)
    return jac


def test_jacobian_metrics_match_finite_differences(tiny):
    model, tokens = tiny
    scores = M.score_model(model, tokens, ("jacobian_covariance", "jacobian_cosine"))
    jac = _finite_difference_jacobian(_numpy_weights(model), _embedded(model, tokens))
    rows = np.stack([jac[:, b, :].ravel() for b in range(B)])            # one row per sequence
    assert scores["jacobian_covariance"] == pytest.approx(_paper_score(rows), rel=1e-5)
    cos = [abs(rows[i] @ rows[j]) / np.linalg.norm(rows[i]) / np.linalg.norm(rows[j])
           for i in range(B) for j in range(B) if i != j]
    expected = 1 - np.sum(np.power(cos, 1 / 20)) / 2 / (B * B - B)
    assert scores["jacobian_cosine"] == pytest.approx(expected, rel=1e-7)


def test_synaptic_saliency_matches_finite_differences(tiny):
    model, tokens = tiny
    score = M.score_model(model, tokens, ("synaptic_saliency",))["synaptic_saliency"]
    weights = _numpy_weights(model)
    table = model.embedding.detach().numpy().copy()

    def loss(ws, emb_table):
        return 0.5 * np.sum(_hand_forward(ws, emb_table[tokens.numpy()])[-1] ** 2)

    eps, total = 1e-6, 0.0
    for layer in range(3):
        for which in (0, 1):                                  # W (input) and U (recurrent); no biases
            matrix = weights[layer][which]
            for idx in np.ndindex(*matrix.shape):
                grads = []
                for sign in (1, -1):
                    ws = [list(w) for w in weights]
                    ws[layer][which] = matrix.copy()
                    ws[layer][which][idx] += sign * eps
                    grads.append(loss(ws, table))
                total += abs(matrix[idx] * (grads[0] - grads[1]) / (2 * eps))
    for idx in np.ndindex(*table.shape):                      # the (tied) embedding
        values = []
        for sign in (1, -1):
            t2 = table.copy()
            t2[idx] += sign * eps
            values.append(loss(weights, t2))
        total += abs(table[idx] * (values[0] - values[1]) / (2 * eps))
    assert score == pytest.approx(total, rel=1e-6)


def test_num_params_by_hand(tiny):
    from benchmarks.proxies.cell_graph import model_param_count

    model, tokens = tiny
    by_hand = VOCAB * EMB + VOCAB + (EMB * HID + HID * HID + HID) + (2 * HID * HID + HID) + (HID * EMB + EMB * EMB + EMB)
    assert M.score_model(model, tokens, ("num_params",))["num_params"] == by_hand
    assert model_param_count(RNN, VOCAB, EMB, HID) == by_hand


def test_eigen_score_of_known_spectra():
    assert M.eigen_score(np.eye(3)) == pytest.approx(-3 * (math.log(1 + K) + 1 / (1 + K)))
    lam = np.array([2.0, 0.5, 1e-9])
    q, _ = np.linalg.qr(np.random.default_rng(1).normal(size=(3, 3)))
    expected = -np.sum(np.log(lam + K) + 1 / (lam + K))
    assert M.eigen_score(q @ np.diag(lam) @ q.T) == pytest.approx(expected, rel=1e-9)


def test_cosine_extremes_and_undefined_cases():
    parallel = np.ones((2, 3, 4))                       # every sequence's Jacobian identical
    assert M.jacobian_cosine(parallel) == pytest.approx(0.5)
    orthogonal = np.zeros((1, 3, 3))
    orthogonal[0] = np.eye(3)
    assert M.jacobian_cosine(orthogonal) == pytest.approx(1.0)
    states = np.random.default_rng(2).normal(size=(5, 4, 3))
    states[..., 1] = 0.7                                # one unit never varies
    assert math.isnan(M.hidden_covariance(states))
    assert math.isnan(M.jacobian_cosine(np.zeros((2, 3, 4))))


def test_seed_controls_weights_and_batch_seed_the_minibatch():
    from benchmarks.proxies.metrics import score_recipe
    from benchmarks.proxies.minibatch import load_corpus

    corpus = load_corpus("ptb")
    kw = dict(batch_size=4, seq_len=6)
    a, _ = score_recipe(RNN, corpus, ("hidden_covariance_l1",), seed=1, **kw)
    b, _ = score_recipe(RNN, corpus, ("hidden_covariance_l1",), seed=1, **kw)
    c, _ = score_recipe(RNN, corpus, ("hidden_covariance_l1",), seed=2, **kw)
    d, _ = score_recipe(RNN, corpus, ("hidden_covariance_l1",), seed=1, batch_seed=2, **kw)
    assert a == b and a != c and a != d


def test_layer1_alone_equals_full_pass(ptb):
    """Scoring only hidden_covariance_l1 (layer 1 built) gives the value of the all-metrics pass."""
    from benchmarks.proxies.metrics import score_recipe
    from benchmarks.proxies.minibatch import load_corpus

    recipe = ptb.search.recipe(ptb.search.index_of(1000002))
    corpus = load_corpus("ptb")
    alone, _ = score_recipe(recipe, corpus, ("hidden_covariance_l1",), batch_size=8, seq_len=5)
    full, _ = score_recipe(recipe, corpus, M.METRICS, batch_size=8, seq_len=5)
    assert alone["hidden_covariance_l1"] == full["hidden_covariance_l1"]
    assert full["num_params"] == 9_174_800
    assert all(np.isfinite(v) for v in full.values())


def test_cell_whose_output_ignores_the_input():
    """h_new_0 never reads x (x feeds only h_new_1): Jacobian metrics are undefined (NaN), the rest defined."""
    from benchmarks.proxies.network import RecipeLanguageModel

    recipe = {"a": {"op": "linear", "input": ["h_prev_0"]},
              "h_new_0": {"op": "activation_tanh", "input": ["a"]},
              "b": {"op": "linear", "input": ["x", "h_prev_1"]},
              "h_new_1": {"op": "activation_sigm", "input": ["b"]}}
    model = RecipeLanguageModel(recipe, VOCAB, embed_size=EMB, hidden_size=HID, seed=1)
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, VOCAB, size=(T, B)))
    scores = M.score_model(model, tokens, M.METRICS)
    assert math.isnan(scores["jacobian_covariance"]) and math.isnan(scores["jacobian_cosine"])
    assert scores["synaptic_saliency"] > 0 and scores["num_params"] > 0


def test_cell_whose_output_reads_no_weight():
    """h_new_0 = tanh(h_prev_0) stays 0 from the zero state and reads no weight: metrics undefined or 0."""
    from benchmarks.proxies.network import RecipeLanguageModel

    recipe = {"h_new_0": {"op": "activation_tanh", "input": ["h_prev_0"]},
              "b": {"op": "linear", "input": ["x", "h_prev_1"]},
              "h_new_1": {"op": "activation_tanh", "input": ["b"]}}
    model = RecipeLanguageModel(recipe, VOCAB, embed_size=EMB, hidden_size=HID, seed=1)
    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, VOCAB, size=(T, B)))
    scores = M.score_model(model, tokens, M.METRICS)
    for name in (*M.HIDDEN_METRICS, "jacobian_covariance", "jacobian_cosine"):
        assert math.isnan(scores[name]), name
    assert scores["synaptic_saliency"] == 0.0
