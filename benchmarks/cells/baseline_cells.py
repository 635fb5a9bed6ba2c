"""The hand-designed cells of NAS-Bench-NLP (plain RNN, LSTM, GRU), written from their equations.

h = h_prev_0 / h_new_0 (the output), c = h_prev_1 / h_new_1 (the LSTM's cell state); every `linear`
below reads [x, h] with its own weights and bias: L(x, h) = W x + U h + b.

  RNN:  h' = tanh(L(x, h))
  LSTM: i = sigm(L), g = tanh(L), f = sigm(L), o = tanh(L)
        c' = f * c + i * g,  h' = o * tanh(c')
  GRU:  r = sigm(L), z = sigm(L), h~ = tanh(L(x, r * h)),  h' = z * h + (1 - z) * h~  (= blend(z, h, h~))

NAS-Bench-NLP's LSTM (recepie 1000001) applies tanh, not a sigmoid, to the output gate o; it is
written so here, so the canonical hashes match 1000001. A textbook LSTM with o = sigm(L) has another
hash and is not among the benchmark's architectures. The GRU reads h_prev_0 in its output blend, so
it breaks the generator-only rule `direct_hidden` (see `benchmarks.cells.recipe.validate(strict=True)`).
"""
from benchmarks.cells.recipe import Cell, parse_cell


def _lin(*inputs):
    return {"op": "linear", "input": list(inputs)}


def _op(op, *inputs):
    return {"op": op, "input": list(inputs)}


def rnn_recipe() -> dict:
    return {
        "pre": _lin("x", "h_prev_0"),
        "h_new_0": _op("activation_tanh", "pre"),
    }


def lstm_recipe() -> dict:
    return {
        "in_pre": _lin("x", "h_prev_0"), "in_gate": _op("activation_sigm", "in_pre"),
        "cand_pre": _lin("h_prev_0", "x"), "candidate": _op("activation_tanh", "cand_pre"),
        "forget_pre": _lin("x", "h_prev_0"), "forget_gate": _op("activation_sigm", "forget_pre"),
        "out_pre": _lin("x", "h_prev_0"), "out_gate": _op("activation_tanh", "out_pre"),
        "kept": _op("elementwise_prod", "forget_gate", "h_prev_1"),
        "written": _op("elementwise_prod", "in_gate", "candidate"),
        "h_new_1": _op("elementwise_sum", "kept", "written"),
        "cell_out": _op("activation_tanh", "h_new_1"),
        "h_new_0": _op("elementwise_prod", "out_gate", "cell_out"),
    }


def gru_recipe() -> dict:
    return {
        "reset_pre": _lin("x", "h_prev_0"), "reset": _op("activation_sigm", "reset_pre"),
        "update_pre": _lin("x", "h_prev_0"), "update": _op("activation_sigm", "update_pre"),
        "reset_h": _op("elementwise_prod", "reset", "h_prev_0"),
        "cand_pre": _lin("x", "reset_h"), "candidate": _op("activation_tanh", "cand_pre"),
        "h_new_0": _op("blend", "update", "h_prev_0", "candidate"),
    }


# name -> (recipe builder, recepie_id of the same architecture in NAS-Bench-NLP)
BASELINES = {
    "rnn": (rnn_recipe, 1000000),
    "lstm": (lstm_recipe, 1000001),
    "gru": (gru_recipe, 1000002),
}


def baseline_cell(name: str) -> Cell:
    """The cell of a baseline by name ('rnn', 'lstm', 'gru')."""
    from benchmarks.core.errors import UserError

    if name not in BASELINES:
        raise UserError(f"unknown baseline cell '{name}'; choose one of: {', '.join(BASELINES)}")
    return parse_cell(BASELINES[name][0]())


def baseline_id(name: str) -> int:
    """The NAS-Bench-NLP recepie_id of a baseline ('rnn' -> 1000000, 'lstm' -> 1000001, 'gru' -> 1000002)."""
    baseline_cell(name)
    return BASELINES[name][1]
