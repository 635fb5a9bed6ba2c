"""Seeded random cells, following the NAS-Bench-NLP generation procedure (Klyuchnikov et al. 2020, sec. 3).

The procedure of the released generator (`RecepieGenerator` in the authors' code), step by step:
1. With k hidden states and I intermediate vertices, add nodes until k + I node slots are used:
   draw an op among linear / blend / elementwise_prod / elementwise_sum (weights 3:1:1:1);
   - linear: 2 or 3 inputs (weights 4:1, fewer if fewer candidates), drawn without replacement
     among x, h_prev_* and the activation nodes so far; it is always followed by an activation
     node (tanh / sigm / leaky_relu, equal weights) reading it, so the graph can end one node over
     budget (the released logs show it: the last slot of I = 21 cells is always a linear);
   - blend (3 inputs) / elementwise (2): drawn without replacement among h_prev_* (never x) and
     every node so far; the op is skipped if there are too few candidates.
2. Choose k distinct nodes as h_new_0..h_new_{k-1} (in the order drawn).
3. Remove the nodes that do not reach an h_new.
4. Reject the cell unless x and every h_prev_i are still used and no h_new_i reads an h_prev_j
   directly; here also unless it passes `validate(strict=True)` (e.g. at most 24 nodes).

k and I: the paper bounds k <= 3 and the node count by 24 (= 3 + 21); the released logs fit
I in {7, 14, 21} (their highest node index is k + I - 1 for those values). How the authors weighted
(k, I) is not published, so each attempt draws k from `hidden_sizes` and I from
`intermediate_vertices` uniformly; the benchmark's mix of k (1: 34%, 2: 47%, 3: 19% of PTB) is
therefore not reproduced exactly. Node names are `node_<slot>` as in the released recipes.

Randomness: Python's `random.Random(seed)` (much faster than numpy for these tiny draws and
stable for a given seed); the upstream code used numpy's global RNG and a Python set for the
candidate order, so its exact cells cannot be reproduced anyway.
"""
import random
from dataclasses import dataclass

from benchmarks.cells.recipe import ACTIVATIONS, Cell, cell_from_recipe, violations


@dataclass(frozen=True)
class GeneratorConfig:
    hidden_sizes: tuple = (1, 2, 3)
    intermediate_vertices: tuple = (7, 14, 21)
    main_ops: tuple = ("linear", "blend", "elementwise_prod", "elementwise_sum")
    main_weights: tuple = (3.0, 1.0, 1.0, 1.0)
    activations: tuple = ACTIVATIONS
    activation_weights: tuple = (1.0, 1.0, 1.0)
    linear_inputs: tuple = (2, 3)
    linear_input_weights: tuple = (4.0, 1.0)
    max_attempts: int = 1000        # per accepted cell, before giving up


DEFAULT_CONFIG = GeneratorConfig()


def generate_recipe(rng: random.Random, n_hidden: int, intermediate: int,
                    config: GeneratorConfig = DEFAULT_CONFIG) -> dict:
    """One raw recipe from steps 1-3 above (not yet checked)."""
    prev = [f"h_prev_{i}" for i in range(n_hidden)]
    base = ["x"] + prev
    recipe: dict[str, dict] = {}
    activations: list[str] = []
    slot = 0
    while slot < n_hidden + intermediate:
        op = rng.choices(config.main_ops, weights=config.main_weights)[0]
        if op == "linear":
            wanted = rng.choices(config.linear_inputs, weights=config.linear_input_weights)[0]
            candidates = base + activations
            recipe[f"node_{slot}"] = {"op": "linear", "input": rng.sample(candidates, min(wanted, len(candidates)))}
            slot += 1
            act = rng.choices(config.activations, weights=config.activation_weights)[0]
            recipe[f"node_{slot}"] = {"op": act, "input": [f"node_{slot - 1}"]}
            activations.append(f"node_{slot}")
            slot += 1
        else:
            wanted = 3 if op == "blend" else 2
            candidates = prev + list(recipe)
            if wanted <= len(candidates):
                recipe[f"node_{slot}"] = {"op": op, "input": rng.sample(candidates, wanted)}
                slot += 1

    # step 2: new hidden states among all nodes
    chosen = rng.sample(list(recipe), n_hidden)
    rename = {old: f"h_new_{i}" for i, old in enumerate(chosen)}
    recipe = {rename.get(name, name): {"op": spec["op"], "input": [rename.get(i, i) for i in spec["input"]]}
              for name, spec in recipe.items()}

    # step 3: keep what reaches an output
    return reaching_outputs(recipe, n_hidden)


def reaching_outputs(recipe: dict, n_hidden: int) -> dict:
    """The nodes of a raw recipe that reach one of h_new_0..h_new_{n_hidden-1}, in recipe order."""
    keep, stack = set(), [f"h_new_{i}" for i in range(n_hidden)]
    while stack:
        name = stack.pop()
        if name in keep or name not in recipe:
            continue
        keep.add(name)
        stack.extend(recipe[name]["input"])
    return {name: spec for name, spec in recipe.items() if name in keep}


def sample_cells(n: int, seed: int = 0, config: GeneratorConfig = DEFAULT_CONFIG,
                 unique: bool = False) -> list[Cell]:
    """`n` random valid cells (validate(strict=True) passes), deterministic for `seed`.

    `unique=True` drops cells whose canonical form was already drawn (by `canonical_hash`).
    """
    return sample_cells_with_stats(n, seed, config, unique)[0]


def sample_cells_with_stats(n: int, seed: int = 0, config: GeneratorConfig = DEFAULT_CONFIG,
                            unique: bool = False) -> tuple[list[Cell], dict]:
    """`sample_cells` plus counts: attempts, rejections per rule, duplicates skipped."""
    from benchmarks.core.errors import UserError

    if n < 0:
        raise UserError(f"the number of cells must be >= 0, got {n}")
    rng = random.Random(seed)
    cells: list[Cell] = []
    seen: set[str] = set()
    stats = {"attempts": 0, "rejected": {}, "duplicates_skipped": 0}
    failures = 0
    while len(cells) < n:
        if failures >= config.max_attempts:
            raise UserError(f"the generator found no valid cell in {config.max_attempts} attempts; "
                            "check the GeneratorConfig")
        stats["attempts"] += 1
        n_hidden = rng.choice(config.hidden_sizes)
        intermediate = rng.choice(config.intermediate_vertices)
        cell = cell_from_recipe(generate_recipe(rng, n_hidden, intermediate, config))
        problems = violations(cell, strict=True)
        if problems:
            failures += 1
            for rule in {p.rule for p in problems}:
                stats["rejected"][rule] = stats["rejected"].get(rule, 0) + 1
            continue
        failures = 0
        if unique:
            from benchmarks.cells.canonical import hash_or_none

            key = hash_or_none(cell)
            if key in seen:
                stats["duplicates_skipped"] += 1
                continue
            seen.add(key)
        cells.append(cell)
    return cells, stats
