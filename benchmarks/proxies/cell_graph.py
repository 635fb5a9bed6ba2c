"""A recipe dict as an ordered computation graph, and the macro model's parameter count (no torch).

Recipes are NAS-Bench-NLP cells `{node: {"op": OP, "input": [names]}}` with inputs `x`,
`h_prev_0..` and outputs `h_new_0..`. Every node of the recipe is evaluated, used or not, and every
`linear` node owns weights, as in the benchmark's `CustomRNNCell` (so parameter counts match the logs).
"""
from dataclasses import dataclass

from benchmarks.core.errors import UserError

ARITY = {"linear": (1, 2, 3), "blend": (3,), "elementwise_prod": (2,), "elementwise_sum": (2,),
         "activation_tanh": (1,), "activation_sigm": (1,), "activation_leaky_relu": (1,)}

# The NAS-Bench-NLP macro model (AWD-LSTM style, as trained in the logs).
EMBED_SIZE = 400
HIDDEN_SIZE = 600
N_LAYERS = 3


@dataclass(frozen=True)
class CellGraph:
    """Nodes in evaluation order (inputs first), with their op and inputs; `n_hidden` states per cell."""
    order: tuple             # node names, topologically sorted, excluding x / h_prev_*
    ops: dict                # node -> op
    inputs: dict             # node -> tuple of input names
    n_hidden: int            # size of the hidden tuple (1 + largest h_new_<i>)

    @property
    def linear_nodes(self) -> list:
        return [n for n in self.order if self.ops[n] == "linear"]

    @property
    def activation_nodes(self) -> list:
        return [n for n in self.order if self.ops[n].startswith("activation_")]


def _hidden_index(name: str, prefix: str):
    suffix = name[len(prefix):] if name.startswith(prefix) else ""
    return int(suffix) if suffix.isdigit() else None


def is_source(name: str) -> bool:
    return name == "x" or _hidden_index(name, "h_prev_") is not None


def cell_graph(recipe: dict) -> CellGraph:
    """Check `recipe` and sort its nodes; UserError naming the first problem found."""
    if not isinstance(recipe, dict) or not recipe:
        raise UserError("a recipe must be a non-empty JSON object {node: {\"op\": ..., \"input\": [...]}}")
    ops, inputs = {}, {}
    for name, spec in recipe.items():
        if not isinstance(spec, dict) or "op" not in spec or not isinstance(spec.get("input"), list):
            raise UserError(f"recipe node '{name}' must be {{\"op\": OP, \"input\": [names]}}")
        op, ins = spec["op"], tuple(spec["input"])
        if op not in ARITY:
            raise UserError(f"recipe node '{name}': unknown op '{op}'; ops are {', '.join(ARITY)}")
        if len(ins) not in ARITY[op]:
            raise UserError(f"recipe node '{name}': {op} takes {ARITY[op]} inputs, got {len(ins)}")
        if is_source(name):
            raise UserError(f"recipe node '{name}' redefines an input of the cell")
        ops[name], inputs[name] = op, ins
    n_hidden = 1 + max((i for i in (_hidden_index(n, "h_new_") for n in ops) if i is not None), default=-1)
    if n_hidden == 0:
        raise UserError("recipe has no output node h_new_0")
    for i in range(n_hidden):
        if f"h_new_{i}" not in ops:
            raise UserError(f"recipe has h_new_{n_hidden - 1} but no h_new_{i}")
    for name, ins in inputs.items():
        for src in ins:
            if src in ops or src == "x":
                continue
            k = _hidden_index(src, "h_prev_")
            if k is None:
                raise UserError(f"recipe node '{name}' reads '{src}', which is not defined")
            if k >= n_hidden:
                raise UserError(f"recipe node '{name}' reads {src} but the cell outputs only "
                                f"{n_hidden} hidden state(s)")
    # Kahn's algorithm, keeping the recipe's order among ready nodes (deterministic).
    order, placed, pending = [], set(), list(ops)
    while pending:
        ready = [n for n in pending if all(is_source(s) or s in placed for s in inputs[n])]
        if not ready:
            raise UserError(f"recipe has a cycle among nodes: {', '.join(sorted(pending))}")
        for n in ready:
            order.append(n)
            placed.add(n)
        pending = [n for n in pending if n not in placed]
    return CellGraph(order=tuple(order), ops=ops, inputs=inputs, n_hidden=n_hidden)


def layer_sizes(embed_size=EMBED_SIZE, hidden_size=HIDDEN_SIZE, n_layers=N_LAYERS) -> list:
    """(input size, hidden size) of each stacked cell; the last has the embedding size (tied weights)."""
    return [(embed_size if i == 0 else hidden_size, embed_size if i == n_layers - 1 else hidden_size)
            for i in range(n_layers)]


def cell_param_count(graph: CellGraph, input_size: int, hidden_size: int) -> int:
    """Weights and biases of one cell: each linear node has one matrix per input and one bias."""
    total = 0
    for node in graph.linear_nodes:
        total += sum((input_size if s == "x" else hidden_size) * hidden_size for s in graph.inputs[node])
        total += hidden_size
    return total


def model_param_count(recipe: dict, vocab_size: int, embed_size=EMBED_SIZE, hidden_size=HIDDEN_SIZE,
                      n_layers=N_LAYERS) -> int:
    """Parameters of the macro model: embedding (tied with the decoder) + decoder bias + the cells."""
    graph = cell_graph(recipe)
    cells = sum(cell_param_count(graph, i, h) for i, h in layer_sizes(embed_size, hidden_size, n_layers))
    return vocab_size * embed_size + vocab_size + cells
