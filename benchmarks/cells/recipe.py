"""The NAS-Bench-NLP recurrent cell ("recipe") as a small immutable graph, with its validity rules.

A recipe is `{node: {"op": OP, "input": [names]}}`. Inputs are `x` (the token embedding) and the
previous hidden states `h_prev_0..h_prev_{k-1}`; the cell must define the new hidden states
`h_new_0..h_new_{k-1}` (`h_new_0` is the cell's output, the others are carried state).

Operations (the numbers are how many inputs they take):
  linear 1-3 (W1 x1 + ... + b, own weights per node), blend 3 (z*a + (1-z)*b, inputs ordered z, a, b),
  elementwise_prod 2, elementwise_sum 2, activation_tanh / activation_sigm / activation_leaky_relu 1.

Node count: only the nodes a recipe defines count towards `MAX_NODES` (24); the inputs `x` and
`h_prev_i` do not. Measured on the real data: the largest PTB cell defines 21 nodes (25 names with
its 4 inputs), so "at most 24 nodes" holds only with inputs not counted, and that matches the
generator (`hidden states + intermediate vertices` = at most 3 + 21 node slots).
"""
import heapq
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

from benchmarks.core.errors import UserError

# op -> (fewest inputs, most inputs)
OPS = {
    "linear": (1, 3),
    "blend": (3, 3),
    "elementwise_prod": (2, 2),
    "elementwise_sum": (2, 2),
    "activation_tanh": (1, 1),
    "activation_sigm": (1, 1),
    "activation_leaky_relu": (1, 1),
}
ACTIVATIONS = ("activation_tanh", "activation_sigm", "activation_leaky_relu")
COMMUTATIVE = frozenset({"linear", "elementwise_prod", "elementwise_sum"})   # input order is irrelevant
PARAMETER_FREE = frozenset(OPS) - {"linear"}                             # no weights of their own
MAX_NODES = 24
MAX_HIDDEN = 3
INPUT_X = "x"

_H_NEW = re.compile(r"h_new_(\d+)")
_H_PREV = re.compile(r"h_prev_(\d+)")

# rule id -> what it checks, in the order violations are reported.
RULES = {
    "format": "the recipe is not shaped like {node: {\"op\": ..., \"input\": [...]}} (or is unreadable)",
    "unknown_op": "a node's op is not one of the seven operations",
    "arity": "a node has the wrong number of inputs for its op",
    "reserved_name": "a node is named like an input (x, h_prev_i)",
    "undefined_input": "a node reads a name that is neither a node nor an input",
    "hidden_mismatch": "a node reads h_prev_i but the cell has no h_new_i",
    "missing_output": "the new hidden states are not exactly h_new_0..h_new_{k-1}",
    "too_many_hidden": f"more than {MAX_HIDDEN} hidden states",
    "too_many_nodes": f"more than {MAX_NODES} nodes (x and h_prev_i not counted)",
    "cycle": "the nodes form a cycle",
    "dead_node": "a node does not feed any new hidden state",
    "unused_input": "x or some h_prev_i does not feed any new hidden state",
    "direct_hidden": "an h_new_i reads an h_prev_j directly (generator constraint; checked with strict=True)",
}
STRICT_RULES = frozenset({"direct_hidden"})


class InvalidCellError(UserError):
    """A recipe that is malformed or breaks a rule of the search space; `rule` and `node` say which."""

    def __init__(self, message: str, rule: str = "format", node: str | None = None, violations=()):
        super().__init__(message)
        self.rule = rule
        self.node = node
        self.violations = list(violations)


class Violation(NamedTuple):
    rule: str          # a key of RULES
    node: str | None   # the node (or input name) at fault; None for whole-cell rules
    message: str


class Node(NamedTuple):
    """One node: its op and the names it reads, in order (immutable)."""
    op: str
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """An immutable recipe: `nodes` maps node name -> Node, in the recipe's order. Not validated."""
    nodes: Mapping[str, Node] = field(repr=False)

    def __post_init__(self):
        object.__setattr__(self, "nodes", MappingProxyType(dict(self.nodes)))

    def __hash__(self):
        return hash(frozenset(self.nodes.items()))

    def __eq__(self, other):
        return isinstance(other, Cell) and dict(self.nodes) == dict(other.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self):
        return f"Cell({len(self.nodes)} nodes, {self.n_hidden} hidden)"

    @cached_property
    def n_hidden(self) -> int:
        """Number of hidden-state slots: 1 + the largest i among the h_new_i nodes (0 if none)."""
        indices = [int(m.group(1)) for name in self.nodes if (m := _H_NEW.fullmatch(name))]
        return max(indices) + 1 if indices else 0

    @property
    def outputs(self) -> list[str]:
        """`h_new_0..h_new_{n_hidden-1}` (whether or not all are defined)."""
        return [f"h_new_{i}" for i in range(self.n_hidden)]

    @property
    def input_names(self) -> list[str]:
        """`x, h_prev_0..h_prev_{n_hidden-1}`: the leaves a valid cell reads."""
        return [INPUT_X] + [f"h_prev_{i}" for i in range(self.n_hidden)]

    def is_input(self, name: str) -> bool:
        """True for `x` and `h_prev_i` names (any i)."""
        return name == INPUT_X or _H_PREV.fullmatch(name) is not None

    def topological_order(self) -> list[str]:
        """Node names, each after the nodes it reads; ties keep the recipe's order.

        InvalidCellError (rule `cycle`) if the nodes form a cycle.
        """
        pending = {name: sum(1 for i in node.inputs if i in self.nodes) for name, node in self.nodes.items()}
        readers: dict[str, list[str]] = {name: [] for name in self.nodes}
        for name, node in self.nodes.items():
            for i in node.inputs:
                if i in self.nodes:
                    readers[i].append(name)
        position = {name: k for k, name in enumerate(self.nodes)}
        ready = [(position[n], n) for n, count in pending.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            _, name = heapq.heappop(ready)
            order.append(name)
            for reader in readers[name]:
                pending[reader] -= 1
                if pending[reader] == 0:
                    heapq.heappush(ready, (position[reader], reader))
        if len(order) < len(self.nodes):
            cycle = find_cycle(self)
            raise InvalidCellError(_cycle_message(cycle), "cycle", cycle[0] if cycle else None)
        return order

    def to_recipe(self) -> dict:
        """The plain recipe dict `{node: {"op": ..., "input": [...]}}`."""
        return {name: {"op": node.op, "input": list(node.inputs)} for name, node in self.nodes.items()}

    def to_json(self) -> str:
        return json.dumps(self.to_recipe())


def cell_from_recipe(recipe) -> Cell:
    """A Cell from a recipe dict; InvalidCellError if it is not shaped like one."""
    if not isinstance(recipe, Mapping):
        raise InvalidCellError(f"a recipe must be a JSON object {{node: {{\"op\": ..., \"input\": [...]}}}}, "
                               f"got {type(recipe).__name__}")
    nodes = {}
    for name, spec in recipe.items():
        # fast path: the shape every benchmark recipe has
        if type(spec) is dict and len(spec) == 2 and type(name) is str and name:
            op, inputs = spec.get("op"), spec.get("input")
            if type(op) is str and type(inputs) is list and all(type(i) is str for i in inputs):
                nodes[name] = Node(op, tuple(inputs))
                continue
        if not isinstance(name, str) or not name:
            raise InvalidCellError(f"node names must be non-empty strings, got {name!r}")
        if not isinstance(spec, Mapping):
            raise InvalidCellError(f"node '{name}' must be an object {{\"op\": ..., \"input\": [...]}}, "
                                   f"got {type(spec).__name__}", node=name)
        extra = sorted(set(spec) - {"op", "input"})
        if extra:
            raise InvalidCellError(f"node '{name}' has unexpected key(s) {', '.join(map(repr, extra))}; "
                                   "a node has only \"op\" and \"input\"", node=name)
        op, inputs = spec.get("op"), spec.get("input")
        if not isinstance(op, str):
            raise InvalidCellError(f"node '{name}' needs \"op\" as a string, got {op!r}", node=name)
        if isinstance(inputs, str) or not isinstance(inputs, (list, tuple)) or \
                not all(isinstance(i, str) for i in inputs):
            raise InvalidCellError(f"node '{name}' needs \"input\" as a list of node names, got {inputs!r}",
                                   node=name)
        nodes[name] = Node(op, tuple(inputs))
    return Cell(nodes)


def parse_cell(obj) -> Cell:
    """A Cell from a Cell, a recipe dict, a JSON string, or a path (str or Path) to a JSON file.

    Only the shape is checked here; call `validate` for the search-space rules.
    """
    if isinstance(obj, Cell):
        return obj
    if isinstance(obj, Mapping):
        return cell_from_recipe(obj)
    if isinstance(obj, (bytes, bytearray)):
        obj = obj.decode("utf-8")
    if isinstance(obj, Path):
        return cell_from_recipe(_read_json_file(obj))
    if isinstance(obj, str):
        text = obj.strip()
        if text.startswith(("{", "[")):
            return cell_from_recipe(_loads(text, "recipe"))
        path = Path(text).expanduser()
        if text and path.is_file():
            return cell_from_recipe(_read_json_file(path))
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise InvalidCellError(f"'{shown}' is neither a JSON object nor an existing file; give a recipe "
                               "like '{\"f\": {\"op\": \"linear\", \"input\": [\"x\", \"h_prev_0\"]}, ...}' "
                               "or the path of a JSON file holding one")
    raise InvalidCellError(f"cannot read a cell from a {type(obj).__name__}; give a dict, JSON text or a file path")


def _loads(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidCellError(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidCellError(f"{where} is nested too deeply to be a cell") from None


def _read_json_file(path: Path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidCellError(f"recipe file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidCellError(f"cannot read recipe file {path}: {exc}") from None
    return _loads(text, f"recipe file {path}")


def find_cycle(cell: Cell) -> list[str]:
    """One cycle as a list of node names (first == last), or [] if the nodes are acyclic."""
    state: dict[str, int] = {}      # 1 on the stack, 2 done
    for start in cell.nodes:
        if state.get(start):
            continue
        stack = [(start, iter(cell.nodes[start].inputs))]
        path = [start]
        state[start] = 1
        while stack:
            name, children = stack[-1]
            child = next((c for c in children if c in cell.nodes and state.get(c) != 2), None)
            if child is None:
                state[name] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                cycle = path[path.index(child):] + [child]
                return cycle[::-1]      # in data-flow order: producer -> reader
            else:
                state[child] = 1
                stack.append((child, iter(cell.nodes[child].inputs)))
                path.append(child)
    return []


def _cycle_message(cycle: list[str]) -> str:
    return f"nodes form a cycle: {' -> '.join(cycle)}; a cell must be acyclic"


def reaching_outputs(cell: Cell) -> set[str]:
    """Names (nodes and inputs) from which some defined h_new_i can be reached, the h_new_i included."""
    seen: set[str] = set()
    stack = [o for o in cell.outputs if o in cell.nodes]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in cell.nodes:
            stack.extend(cell.nodes[name].inputs)
    return seen


def violations(cell, strict: bool = False) -> list[Violation]:
    """Every rule the cell breaks, as (rule, node, message), in RULES order; [] for a valid cell.

    Never raises: input that cannot be read as a recipe gives one `format` violation.
    `strict=True` adds the generator-only rule `direct_hidden` (see `validate`).
    """
    try:
        cell = parse_cell(cell)
    except InvalidCellError as exc:
        return [Violation("format", exc.node, str(exc))]
    found: list[Violation] = []
    add = lambda rule, node, msg: found.append(Violation(rule, node, msg))  # noqa: E731
    n_hidden = cell.n_hidden
    allowed_prev = {0: "no h_prev_i (the cell has no h_new_i)", 1: "h_prev_0"}.get(
        n_hidden, f"h_prev_0..h_prev_{n_hidden - 1}")

    for name, node in cell.nodes.items():
        if node.op not in OPS:
            add("unknown_op", name, f"node '{name}' has unknown op '{node.op}'; ops are {', '.join(OPS)}")
        else:
            low, high = OPS[node.op]
            if not low <= len(node.inputs) <= high:
                want = f"exactly {low}" if low == high else f"{low} to {high}"
                add("arity", name, f"node '{name}' ({node.op}) has {len(node.inputs)} input(s); "
                                   f"{node.op} takes {want}")
    for name in cell.nodes:
        if cell.is_input(name):
            add("reserved_name", name, f"node '{name}' uses an input's name; x and h_prev_i are the cell's "
                                       "inputs and cannot be defined as nodes")
    for name, node in cell.nodes.items():
        for i in node.inputs:
            if i in cell.nodes or i == INPUT_X:
                continue
            m = _H_PREV.fullmatch(i)
            if m and int(m.group(1)) < n_hidden:
                continue
            if m:
                add("hidden_mismatch", name, f"node '{name}' reads '{i}' but the cell has no 'h_new_{m.group(1)}'; "
                                             f"with {n_hidden} new hidden state(s) it may read {allowed_prev}")
            else:
                add("undefined_input", name, f"node '{name}' reads '{i}', which is neither a node of the cell "
                                             f"nor an input (x, {allowed_prev})")

    defined = sorted(int(m.group(1)) for name in cell.nodes if (m := _H_NEW.fullmatch(name)))
    if not defined:
        add("missing_output", "h_new_0", "the cell defines no 'h_new_0'; it must define its new hidden states "
                                         "h_new_0..h_new_{k-1} (h_new_0 is the output)")
    else:
        for i in range(n_hidden):
            if i not in defined:
                have = ", ".join(f"h_new_{d}" for d in defined)
                add("missing_output", f"h_new_{i}", f"the cell defines {have} but not 'h_new_{i}'; new hidden "
                                                   f"states must be numbered h_new_0..h_new_{{k-1}} without gaps")
    if n_hidden > MAX_HIDDEN:
        add("too_many_hidden", None, f"the cell has {n_hidden} hidden states (h_new_0..h_new_{n_hidden - 1}); "
                                     f"at most {MAX_HIDDEN} are allowed")
    if len(cell.nodes) > MAX_NODES:
        add("too_many_nodes", None, f"the cell defines {len(cell.nodes)} nodes; at most {MAX_NODES} are allowed "
                                    "(the inputs x and h_prev_i are not counted)")
    cycle = find_cycle(cell)
    if cycle:
        add("cycle", cycle[0], _cycle_message(cycle))

    if defined:
        reach = reaching_outputs(cell)
        for name in cell.nodes:
            if name not in reach and not _H_NEW.fullmatch(name):
                add("dead_node", name, f"node '{name}' does not feed any new hidden state h_new_i; remove it")
        for name in cell.input_names:
            if name not in reach:
                add("unused_input", name, f"input '{name}' does not feed any new hidden state; a cell must use "
                                          f"x and every h_prev_i it has (here {', '.join(cell.input_names)})")
    if strict:
        for out in cell.outputs:
            node = cell.nodes.get(out)
            direct = [i for i in (node.inputs if node else ()) if _H_PREV.fullmatch(i)]
            if direct:
                add("direct_hidden", out, f"'{out}' reads {', '.join(direct)} directly; the NAS-Bench-NLP "
                                          "generator never wires a previous hidden state straight into a new one")
    order = {rule: k for k, rule in enumerate(RULES)}
    return sorted(found, key=lambda v: order[v.rule])


def validate(cell, strict: bool = False) -> Cell:
    """The cell (parsed if needed) if it obeys every rule; else InvalidCellError naming the node.

    Default rules accept every benchmark recipe. `strict=True` also applies the generator's own
    sanity check `direct_hidden` (no h_new_i with an h_prev_j among its inputs), which the
    hand-written GRU (recepie 1000002, `h_new_0 = blend(z, h_prev_0, h_tilde)`) breaks.
    """
    cell = parse_cell(cell)         # malformed input raises here, with rule "format"
    found = violations(cell, strict=strict)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more problem(s))" if len(found) > 1 else ""
        raise InvalidCellError(first.message + more, first.rule, first.node, found)
    return cell


def is_valid(cell, strict: bool = False) -> bool:
    """True if `validate` would accept the cell (malformed input counts as invalid)."""
    return not violations(cell, strict=strict)
