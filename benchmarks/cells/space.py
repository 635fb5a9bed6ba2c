"""The recurrent-cell search space of NAS-Bench-NLP as a `SearchSpace` (ptb and wt2).

An architecture is a `Cell` (benchmarks.cells.recipe). What the space offers:

- `sample`: the release's generator procedure (benchmarks.cells.generator), seeded from the rng.
- `mutate` / `neighbours`: one change: a node's op replaced by another op that takes the same
  inputs (activations among themselves; linear, blend and the element-wise ops where the input count
  fits), or one input of a node rewired to another name it may read without a cycle (x, an h_prev_i,
  a node not downstream of it). Only results that pass `validate(strict=True)` count.
- `encode` (feature kind `cell-encoding`, 80 numbers), independent of node names and order: the
  number of hidden states (one-hot, 3), op counts (7), counts of edges by (source kind, target op)
  with source kinds x, h_prev and the 7 ops (63), and the op of the node each h_new is (counts, 7).
  Distance: L1 on the encoding. The encoding is not injective (two cells can share it); snapping
  then breaks the tie with the trial's seeded order.
- `choices` (a ConfigSpace for libraries): `n_hidden` (1-3), `n_nodes` (1-24), `output{i}` (the slot
  that is h_new_i; a slot out of range or taken falls back to the last free one), and per node slot k
  `node{k}_op` and three input references `node{k}_in{j}` (0: x, 1-3: h_prev_(j-1 mod n_hidden), 4+:
  an earlier slot), active when `n_nodes` > k. A configuration builds a cell with each op taking the
  inputs it needs (linear: the distinct references among its three; an op with too few names to
  read becomes linear), nodes that reach no output dropped; every valid cell has a configuration
  (`to_values`, nodes in topological order). Such a cell need not be a valid one of the space (an
  input may go unused); like any proposal it is snapped to the nearest
  evaluated cell by the encoding.
"""
from __future__ import annotations

import numpy as np

from benchmarks.cells.recipe import ACTIVATIONS, OPS, Cell, Node, cell_from_recipe, is_valid
from benchmarks.core.space import Choice, SearchSpace

OP_NAMES = tuple(OPS)                                  # 7 ops, in the release's order
SOURCE_KINDS = ("x", "h_prev") + OP_NAMES              # 9 kinds of edge source
MAX_SLOTS = 24
MUTATION_TRIES = 200                                   # draws before giving up on a valid mutation


class CellSpace(SearchSpace):
    """NAS-Bench-NLP's recurrent cells (see the module docstring)."""
    name = "cells"
    offers = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
    encoding_kind = "cell-encoding"

    def parse(self, recipe: dict) -> Cell:
        return cell_from_recipe(recipe)

    def sample(self, rng: np.random.Generator) -> Cell:
        from benchmarks.cells.generator import sample_cells

        return sample_cells(1, seed=int(rng.integers(2**63 - 1)))[0]

    def mutate(self, cell: Cell, rng: np.random.Generator) -> Cell:
        """A random valid one-change neighbour (uniform over moves, redrawn until valid); the cell
        itself if none of `MUTATION_TRIES` draws is valid."""
        moves = _moves(cell)
        for _ in range(MUTATION_TRIES):
            child = _apply(cell, moves[int(rng.integers(len(moves)))])
            if child is not None and child != cell and is_valid(child, strict=True):
                return child
        return cell

    def neighbours(self, cell: Cell) -> list[Cell]:
        """Every distinct valid cell one change away."""
        out, seen = [], {cell}
        for move in _moves(cell):
            child = _apply(cell, move)
            if child is not None and child not in seen and is_valid(child, strict=True):
                seen.add(child)
                out.append(child)
        return out

    def encode(self, cell: Cell) -> np.ndarray:
        nodes = cell.nodes
        vector = np.zeros(3 + len(OP_NAMES) + len(SOURCE_KINDS) * len(OP_NAMES) + len(OP_NAMES))
        vector[min(max(cell.n_hidden, 1), 3) - 1] = 1
        base = 3 + len(OP_NAMES)
        for name, node in nodes.items():
            target = OP_NAMES.index(node.op) if node.op in OP_NAMES else None
            if target is None:
                continue
            vector[3 + target] += 1
            for source in node.inputs:
                kind = "x" if source == "x" else "h_prev" if source.startswith("h_prev_") else \
                    nodes[source].op if source in nodes else None
                if kind in SOURCE_KINDS:
                    vector[base + SOURCE_KINDS.index(kind) * len(OP_NAMES) + target] += 1
            if name.startswith("h_new_"):
                vector[base + len(SOURCE_KINDS) * len(OP_NAMES) + target] += 1
        return vector

    def choices(self) -> list[Choice]:
        out = [Choice("n_hidden", (1, 2, 3)), Choice("n_nodes", tuple(range(1, MAX_SLOTS + 1)))]
        out += [Choice(f"output{i}", tuple(range(MAX_SLOTS))) for i in range(3)]
        for k in range(MAX_SLOTS):
            active = tuple(n for n in range(1, MAX_SLOTS + 1) if n > k)
            parent = ("n_nodes", active) if k > 0 else (None, ())
            out.append(Choice(f"node{k}_op", OP_NAMES, *parent))
            out += [Choice(f"node{k}_in{j}", tuple(range(4 + k)), *parent) for j in range(3)]
        return out

    def from_values(self, values: dict) -> Cell:
        n_hidden, n_nodes = int(values["n_hidden"]), int(values["n_nodes"])
        names = [f"node_{k}" for k in range(n_nodes)]
        taken = set()
        for i in range(min(n_hidden, n_nodes)):
            slot = int(values.get(f"output{i}", n_nodes - 1 - i))
            if not 0 <= slot < n_nodes or slot in taken:
                slot = max(k for k in range(n_nodes) if k not in taken)
            taken.add(slot)
            names[slot] = f"h_new_{i}"

        def ref(index: int) -> str:
            if index == 0:
                return "x"
            if index <= 3:
                return f"h_prev_{(index - 1) % n_hidden}"
            return names[index - 4]

        recipe = {}
        for k in range(n_nodes):
            op = str(values[f"node{k}_op"])
            refs = list(dict.fromkeys(ref(min(int(values[f"node{k}_in{j}"]), 3 + k)) for j in range(3)))
            low, high = OPS[op]
            inputs = refs[:high]
            pool = [r for r in ("x", *(f"h_prev_{i}" for i in range(n_hidden)), *names[:k]) if r not in inputs]
            inputs += pool[:max(0, low - len(inputs))]   # blend and element-wise ops need distinct inputs
            if len(inputs) < low:                        # too few names to read this early: a linear node
                op = "linear"
            recipe[names[k]] = {"op": op, "input": inputs}
        from benchmarks.cells.generator import reaching_outputs

        return cell_from_recipe(reaching_outputs(recipe, n_hidden))

    def to_values(self, cell: Cell) -> dict:
        """The configuration of a cell: its nodes in topological order (h_prev_i is reference i + 1)."""
        order = [n for n in cell.topological_order() if not cell.is_input(n)]
        index = {name: 4 + k for k, name in enumerate(order)}
        values = {"n_hidden": cell.n_hidden, "n_nodes": len(order)}
        values.update({f"output{i}": order.index(f"h_new_{i}") for i in range(cell.n_hidden)})
        for k, name in enumerate(order):
            node = cell.nodes[name]
            refs = [0 if r == "x" else 1 + int(r.rsplit("_", 1)[1]) if r.startswith("h_prev_") else index[r]
                    for r in node.inputs]
            refs += [refs[-1]] * (3 - len(refs))
            values[f"node{k}_op"] = node.op
            values.update({f"node{k}_in{j}": refs[j] for j in range(3)})
        return values


def _same_arity_ops(op: str, inputs: int) -> list[str]:
    pool = ACTIVATIONS if op in ACTIVATIONS else [o for o in OP_NAMES if o not in ACTIVATIONS]
    return [o for o in pool if o != op and OPS[o][0] <= inputs <= OPS[o][1]]


def _moves(cell: Cell) -> list[tuple]:
    """Every one-change move: ("op", node, new op) and ("input", node, position, new source)."""
    order = cell.topological_order()
    position = {name: k for k, name in enumerate(order)}
    moves = []
    for name, node in cell.nodes.items():
        moves += [("op", name, op) for op in _same_arity_ops(node.op, len(node.inputs))]
        upstream = [n for n in order if position[n] < position[name]]
        for slot, current in enumerate(node.inputs):
            moves += [("input", name, slot, source) for source in upstream
                      if source != current and source not in node.inputs]
    return moves


def _apply(cell: Cell, move: tuple) -> Cell | None:
    nodes = dict(cell.nodes)
    if move[0] == "op":
        _, name, op = move
        nodes[name] = Node(op, nodes[name].inputs)
    else:
        _, name, slot, source = move
        inputs = list(nodes[name].inputs)
        inputs[slot] = source
        nodes[name] = Node(nodes[name].op, tuple(inputs))
    try:
        return Cell(nodes)
    except Exception:
        return None
