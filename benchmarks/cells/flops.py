"""FLOPs of a recurrent cell's forward pass per token, from its recipe and the release's sizes.

Convention (that of `torch.utils.flop_counter`, fvcore and most NAS papers): a matrix product of an
[m, k] by a [k, n] matrix costs 2·m·k·n FLOPs (one multiply and one add per term); biases,
activations, blends and element-wise products and sums are not counted (they are O(hidden size) per
token against O(hidden size²) for the products). Every `linear` node of a recipe is evaluated, used
or not, as in the release's `CustomRNNCell`, and holds one weight matrix per input; the macro model
stacks three cells (400 -> 600, 600 -> 600, 600 -> 400). Counted: the three cells, per token of the
sequence (embedding lookup and decoder are the same for every cell and left out).
"""
import json

from benchmarks.proxies.cell_graph import EMBED_SIZE, HIDDEN_SIZE, N_LAYERS, layer_sizes


def cell_flops(recipe, embed_size: int = EMBED_SIZE, hidden_size: int = HIDDEN_SIZE, n_layers: int = N_LAYERS) -> int:
    """FLOPs per token of the stacked cells' forward pass for `recipe` (a dict or its JSON text)."""
    if isinstance(recipe, str):
        recipe = json.loads(recipe)
    total = 0
    for input_size, size in layer_sizes(embed_size, hidden_size, n_layers):
        for node in recipe.values():
            if node["op"] == "linear":
                total += sum(2 * (input_size if source == "x" else size) * size for source in node["input"])
    return total
