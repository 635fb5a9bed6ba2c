"""Training-free metrics of an untrained recurrent language model (Serianni & Kalita, ACL 2023).

Each metric is a small function of arrays (numpy, float64) so it can be checked by hand; `score_model`
runs the network once on a minibatch and computes the requested ones. Conventions follow the
authors' released code (`RNN_metrics.ipynb`), with the differences stated per metric.

- hidden_covariance_l{1,2,3}: correlation matrix C (units x units) of layer l's hidden states h_t
  (t = 1..T, all sequences) over the minibatch; score = -sum_i log(lambda_i + k) + 1/(lambda_i + k),
  k = 1e-5, over C's eigenvalues. NaN when a unit never varies (C undefined), as in the paper's
  population. (Authors: states entering each step, so also the zero initial state; here the
  states the cell produces.)
- jacobian_covariance (Mellor et al. 2021): J = d(sum of last-layer outputs)/d(embeddings), one
  row per sequence (flattened over time and embedding); the same eigenvalue score on the B x B
  correlation matrix of those rows.
- jacobian_cosine (Celotti et al. 2020): 1 - sum_{i != j} |cos(J_i, J_j)|^(1/20) / (2 (B^2 - B)),
  exactly the authors' normalisation.
- synaptic_saliency (Tanaka et al. 2020): sum over the cells' weight matrices and the (tied)
  embedding of |theta * dL/dtheta| with L = 1/2 sum of squared last-layer outputs (the authors'
  `y.backward(y)`; biases excluded as theirs; they also skipped each linear node's first matrix,
  here all are included).
- activation_distance (Mellor et al. 2021): binary code c = [a > 0] of every activation node's
  output a at every step and layer; K = sum c c^T + (1 - c)(1 - c)^T (B x B, number of agreeing
  units = total - Hamming distance); score = log det K. (Authors accumulate K over two identical
  passes, which adds the constant B log 2.)
- num_params: parameter count of the macro model (the trivial baseline; analytic, no network).
"""
import time

import numpy as np

EIGEN_OFFSET = 1e-5
COSINE_POWER = 1.0 / 20.0

HIDDEN_METRICS = ("hidden_covariance_l1", "hidden_covariance_l2", "hidden_covariance_l3")
GRADIENT_METRICS = ("jacobian_covariance", "jacobian_cosine", "synaptic_saliency")
METRICS = HIDDEN_METRICS + ("activation_distance",) + GRADIENT_METRICS + ("num_params",)
PUBLISHED_COLUMN = {
    "hidden_covariance_l1": "Layer 1 Hidden Covariance",
    "hidden_covariance_l2": "Layer 2 Hidden Covariance",
    "hidden_covariance_l3": "Layer 3 Hidden Covariance",
    "activation_distance": "Activation Distance",
    "jacobian_covariance": "Jacobian Covariance",
    "jacobian_cosine": "Jacobian Cosine",
    "synaptic_saliency": "Synaptic Saliency",
}


def eigen_score(matrix) -> float:
    """-sum(log(lambda + k) + 1/(lambda + k)) over the eigenvalues of a symmetric matrix, k = 1e-5."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if not np.all(np.isfinite(matrix)):
        return float("nan")
    lam = np.linalg.eigvalsh(matrix) + EIGEN_OFFSET
    if np.any(lam <= 0):
        return float("nan")
    return float(-np.sum(np.log(lam) + 1.0 / lam))


def correlation_score(rows) -> float:
    """eigen_score of the correlation matrix between the rows of `rows` [n, samples]; NaN if a row is constant."""
    rows = np.asarray(rows, dtype=np.float64)
    if not np.all(np.isfinite(rows)) or np.any(np.ptp(rows, axis=1) == 0):
        return float("nan")
    centred = rows - rows.mean(axis=1, keepdims=True)
    norms = np.sqrt(np.einsum("ij,ij->i", centred, centred))
    unit = centred / norms[:, None]
    return eigen_score(np.clip(unit @ unit.T, -1.0, 1.0))


def hidden_covariance(states) -> float:
    """Hidden covariance of one layer's states [T, B, H]: correlation between the H units over T*B samples."""
    states = np.asarray(states, dtype=np.float64)
    return correlation_score(states.reshape(-1, states.shape[-1]).T)


def per_sequence_rows(jacobian) -> np.ndarray:
    """[T, B, E] -> [B, T*E]: one row per sequence of the minibatch."""
    jacobian = np.asarray(jacobian, dtype=np.float64)
    return np.transpose(jacobian, (1, 0, 2)).reshape(jacobian.shape[1], -1)


def jacobian_covariance(jacobian) -> float:
    """Mellor et al.'s score of the input Jacobian [T, B, E] (correlation between sequences)."""
    return correlation_score(per_sequence_rows(jacobian))


def jacobian_cosine(jacobian) -> float:
    """Celotti et al.'s score: 1 - sum_{i!=j} |cos(J_i, J_j)|^(1/20) / (2 (B^2 - B)); NaN if a row is 0."""
    rows = per_sequence_rows(jacobian)
    norms = np.linalg.norm(rows, axis=1)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        return float("nan")
    unit = rows / norms[:, None]
    n = unit.shape[0]
    cosines = np.clip(unit @ unit.T, -1.0, 1.0)
    np.fill_diagonal(cosines, 0.0)        # exactly: a rounding residue would count as |c|^(1/20)
    summed = np.sum(np.abs(cosines) ** COSINE_POWER) / 2.0
    return float(1.0 - summed / (n * n - n))


def synaptic_saliency(params, grads) -> float:
    """sum over tensors of |theta * dL/dtheta| (arrays or tensors of equal shapes)."""
    total = 0.0
    for p, g in zip(params, grads):
        total += float(np.sum(np.abs(np.asarray(p, dtype=np.float64) * np.asarray(g, dtype=np.float64))))
    return total


def activation_kernel(codes) -> np.ndarray:
    """K = sum over code blocks c [B, units] of c c^T + (1 - c)(1 - c)^T (float64 [B, B])."""
    kernel = None
    for c in codes:
        c = np.asarray(c, dtype=np.float64)
        block = c @ c.T + (1.0 - c) @ (1.0 - c).T
        kernel = block if kernel is None else kernel + block
    return kernel


def log_det(kernel) -> float:
    """log |det K| (NaN when K is singular or not finite)."""
    kernel = np.asarray(kernel, dtype=np.float64)
    if not np.all(np.isfinite(kernel)):
        return float("nan")
    sign, value = np.linalg.slogdet(kernel)
    return float(value) if sign != 0 else float("nan")


def _layers_needed(metrics) -> int:
    needed = {"hidden_covariance_l1": 1, "hidden_covariance_l2": 2}
    return max((needed.get(m, 3) for m in metrics if m != "num_params"), default=0)


def score_model(model, tokens, metrics=METRICS) -> dict:
    """Run `model` (a RecipeLanguageModel) on `tokens` [T, B] (torch int64) and compute `metrics`.

    Runs only as much as the metrics need: layer 1 alone for hidden_covariance_l1, a forward pass
    without gradients unless a gradient metric is asked for. Returns {metric: float}.
    """
    import torch

    from benchmarks.proxies.cell_graph import N_LAYERS
    from benchmarks.proxies.network import count_parameters

    metrics = tuple(metrics)
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}")
    result = {}
    if "num_params" in metrics:
        if len(model.layers) != N_LAYERS:
            raise ValueError("num_params needs the full model (build_layers=None)")
        result["num_params"] = float(count_parameters(model))
    n_layers = _layers_needed(metrics)
    if n_layers == 0:
        return result
    want_grad = any(m in GRADIENT_METRICS for m in metrics)
    kernel = [None]

    def observe(_name, value):
        c = (value.detach() > 0).to(torch.float32)
        block = (c @ c.T + (1.0 - c) @ (1.0 - c).T).to(torch.float64)
        kernel[0] = block if kernel[0] is None else kernel[0] + block

    model.set_observer(observe if "activation_distance" in metrics else None)
    try:
        with torch.set_grad_enabled(want_grad):
            embedded = model.embed(tokens)
            outputs, current = [], embedded
            for layer in model.layers[:n_layers]:
                current, _ = layer(current)
                outputs.append(current)
    finally:
        model.set_observer(None)
    for index, name in enumerate(HIDDEN_METRICS):
        if name in metrics:
            result[name] = hidden_covariance(outputs[index].detach().numpy())
    if "activation_distance" in metrics:
        result["activation_distance"] = log_det(kernel[0].numpy()) if kernel[0] is not None else float("nan")
    if want_grad:
        last = outputs[-1]
        connected = last.requires_grad     # False when the output reads neither the input nor any weight
        if "jacobian_covariance" in metrics or "jacobian_cosine" in metrics:
            (jac,) = torch.autograd.grad(last.sum(), embedded, retain_graph="synaptic_saliency" in metrics,
                                         allow_unused=True) if connected else (None,)
            # None: the output never depends on the input (h_new_0 reads no path from x); J = 0.
            jac = torch.zeros_like(embedded).numpy() if jac is None else jac.numpy()
            if "jacobian_covariance" in metrics:
                result["jacobian_covariance"] = jacobian_covariance(jac)
            if "jacobian_cosine" in metrics:
                result["jacobian_cosine"] = jacobian_cosine(jac)
        if "synaptic_saliency" in metrics:
            params = model.cell_weights() + [model.embedding]
            grads = torch.autograd.grad(0.5 * (last ** 2).sum(), params, allow_unused=True) if connected \
                else [None] * len(params)
            total = 0.0
            for p, g in zip(params, grads):
                if g is not None:
                    total += float((p.detach().double() * g.double()).abs().sum())
            result["synaptic_saliency"] = total
    return {m: result[m] for m in metrics}


def score_recipe(recipe, corpus, metrics=METRICS, seed: int = 0, batch_seed=None,
                 batch_size=None, seq_len=None, split=None) -> tuple:
    """Build the model of `recipe` (weights from `seed`) and score it on the minibatch of `batch_seed`
    (default `seed`) drawn from the corpus split `split` (default minibatch.SPLIT, training tokens).
    Returns ({metric: float}, seconds)."""
    import torch

    from benchmarks.proxies import minibatch as mb
    from benchmarks.proxies.cell_graph import model_param_count
    from benchmarks.proxies.network import RecipeLanguageModel

    start = time.perf_counter()
    metrics = tuple(metrics)
    scores = {}
    if "num_params" in metrics:
        scores["num_params"] = float(model_param_count(recipe, corpus.vocab_size))
    network_metrics = tuple(m for m in metrics if m != "num_params")
    if network_metrics:
        tokens = mb.minibatch(corpus.splits[mb.check_split(split or mb.SPLIT)], seed if batch_seed is None else batch_seed,
                              batch_size or mb.BATCH_SIZE, seq_len or mb.SEQ_LEN)
        model = RecipeLanguageModel(recipe, corpus.vocab_size, seed=seed,
                                    build_layers=_layers_needed(network_metrics))
        scores.update(score_model(model, torch.from_numpy(tokens), network_metrics))
    return {m: scores[m] for m in metrics}, time.perf_counter() - start
