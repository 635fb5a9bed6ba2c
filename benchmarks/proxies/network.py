"""A benchmark cell as a PyTorch recurrent cell, inside NAS-Bench-NLP's AWD-LSTM-style macro model.

Follows the benchmark's release (`custom_rnn.py`, `model.py`): a `linear` node is a sum of one
weight matrix per input plus one bias; every node of the recipe is evaluated; three stacked cells
(400 -> 600 -> 600 -> 400), the embedding (400) tied with the decoder, which adds a bias per word.
Scoring runs with every dropout off. Initialisation, as in the release: cell parameters
U(-1/sqrt(H), 1/sqrt(H)) with H the cell's hidden size (PyTorch's default for its recurrent layers),
the embedding U(-0.1, 0.1), the decoder bias 0; drawn from a `torch.Generator` seeded with `seed`.

Imports torch at module level: import this module only inside functions that need it.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.proxies.cell_graph import (EMBED_SIZE, HIDDEN_SIZE, N_LAYERS, CellGraph, cell_graph,
                                           layer_sizes)

ACTIVATIONS = {
    "activation_tanh": torch.tanh,
    "activation_sigm": torch.sigmoid,
    "activation_leaky_relu": F.leaky_relu,   # negative slope 0.01, as torch.nn.LeakyReLU()
}


class MultiLinear(nn.Module):
    """y = W_1 x_1 + ... + W_k x_k + b: one weight matrix per input, one bias."""

    def __init__(self, input_sizes, output_size: int):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(torch.empty(output_size, n)) for n in input_sizes])
        self.bias = nn.Parameter(torch.empty(output_size))

    def forward(self, *inputs, skip=None, extra=None):
        """Sum of the maps of `inputs`; the map of input `skip` is replaced by the precomputed `extra`."""
        out = self.bias if extra is None else extra + self.bias
        for i, (weight, value) in enumerate(zip(self.weights, inputs)):
            if i != skip:
                out = out + F.linear(value, weight)
        return out


class RecipeCell(nn.Module):
    """One time step of a recipe: (x [B, input], hidden tuple of [B, H]) -> new hidden tuple.

    `observer`, when set, is called as observer(node, value) with each activation node's output.
    """

    def __init__(self, graph: CellGraph, input_size: int, hidden_size: int):
        super().__init__()
        self.graph = graph
        self.input_size, self.hidden_size = input_size, hidden_size
        self.linear_names = graph.linear_nodes
        self.linears = nn.ModuleList(
            MultiLinear([input_size if s == "x" else hidden_size for s in graph.inputs[n]], hidden_size)
            for n in self.linear_names)
        self._linear_of = dict(zip(self.linear_names, self.linears))
        self.observer = None

    def x_terms(self, xs):
        """Per linear node reading `x`: W_x xs for the whole sequence at once ({node: [T, B, H]})."""
        terms = {}
        for name, module in self._linear_of.items():
            ins = self.graph.inputs[name]
            if "x" in ins:
                terms[name] = F.linear(xs, module.weights[ins.index("x")])
        return terms

    def forward(self, x, hidden, x_terms_t=None):
        graph, values = self.graph, {"x": x}
        for i, h in enumerate(hidden):
            values[f"h_prev_{i}"] = h
        for name in graph.order:
            op, ins = graph.ops[name], [values[s] for s in graph.inputs[name]]
            if op == "linear":
                names = graph.inputs[name]
                if x_terms_t is not None and name in x_terms_t:
                    out = self._linear_of[name](*ins, skip=names.index("x"), extra=x_terms_t[name])
                else:
                    out = self._linear_of[name](*ins)
            elif op == "blend":
                out = ins[0] * ins[1] + (1 - ins[0]) * ins[2]
            elif op == "elementwise_prod":
                out = ins[0] * ins[1]
            elif op == "elementwise_sum":
                out = ins[0] + ins[1]
            else:
                out = ACTIVATIONS[op](ins[0])
                if self.observer is not None:
                    self.observer(name, out)
            values[name] = out
        return tuple(values[f"h_new_{i}"] for i in range(graph.n_hidden))


class RecipeRNN(nn.Module):
    """A cell unrolled over a sequence: xs [T, B, input] -> (h_new_0 at each step [T, B, H], last hidden)."""

    def __init__(self, graph: CellGraph, input_size: int, hidden_size: int):
        super().__init__()
        self.cell = RecipeCell(graph, input_size, hidden_size)
        self.hidden_size = hidden_size

    def forward(self, xs, hidden=None):
        batch = xs.shape[1]
        if hidden is None:
            hidden = tuple(xs.new_zeros(batch, self.hidden_size) for _ in range(self.cell.graph.n_hidden))
        terms = self.cell.x_terms(xs)
        outputs = []
        for t in range(xs.shape[0]):
            hidden = self.cell(xs[t], hidden, {k: v[t] for k, v in terms.items()})
            outputs.append(hidden[0])
        return torch.stack(outputs), hidden


class RecipeLanguageModel(nn.Module):
    """Embedding -> three stacked recipe cells -> (tied) decoder; dropouts are not applied."""

    def __init__(self, recipe, vocab_size: int, embed_size: int = EMBED_SIZE,
                 hidden_size: int = HIDDEN_SIZE, n_layers: int = N_LAYERS, seed: int = 0,
                 build_layers: int | None = None):
        """`build_layers` < n_layers builds only the first cells (same weights as the full model)."""
        super().__init__()
        graph = recipe if isinstance(recipe, CellGraph) else cell_graph(recipe)
        self.graph = graph
        self.embedding = nn.Parameter(torch.empty(vocab_size, embed_size))
        sizes = layer_sizes(embed_size, hidden_size, n_layers)[:build_layers]
        self.layers = nn.ModuleList(RecipeRNN(graph, i, h) for i, h in sizes)
        self.decoder_bias = nn.Parameter(torch.empty(vocab_size))
        self.reset_parameters(seed)

    def reset_parameters(self, seed: int) -> None:
        """Draw all weights from a generator seeded with `seed`: the embedding, then layer by layer."""
        generator = torch.Generator().manual_seed(int(seed))
        with torch.no_grad():
            self.embedding.uniform_(-0.1, 0.1, generator=generator)
            for layer in self.layers:
                bound = 1.0 / math.sqrt(layer.hidden_size)
                for param in layer.parameters():
                    param.uniform_(-bound, bound, generator=generator)
            self.decoder_bias.zero_()

    def cell_weights(self) -> list:
        """The weight matrices of every cell (no biases), layer by layer."""
        return [w for layer in self.layers for lin in layer.cell.linears for w in lin.weights]

    def set_observer(self, observer) -> None:
        for layer in self.layers:
            layer.cell.observer = observer

    def embed(self, tokens):
        """tokens int64 [T, B] -> embeddings [T, B, E]."""
        return F.embedding(tokens, self.embedding)

    def forward(self, embedded):
        """embedded [T, B, E] -> list of each layer's outputs [T, B, H_layer] (the last is the model's)."""
        outputs, current = [], embedded
        for layer in self.layers:
            current, _ = layer(current)
            outputs.append(current)
        return outputs

    def logits(self, output):
        """Decoder with weights tied to the embedding: [..., E] -> [..., vocab]."""
        return F.linear(output, self.embedding, self.decoder_bias)


def count_parameters(module: nn.Module) -> int:
    """Distinct parameters of a built model (tied weights counted once)."""
    return sum(p.numel() for p in module.parameters())
