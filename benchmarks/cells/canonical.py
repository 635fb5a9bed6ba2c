"""Canonical form and stable hash of a cell, and lookup of a cell among a benchmark's architectures.

Two recipes get the same `canonical_hash` (sha256 hex) exactly when they describe the same
computation graph up to:
- node names (only `x`, `h_prev_i`, `h_new_i` are fixed names);
- the order of the inputs of `linear`, `elementwise_sum` and `elementwise_prod` (all commutative:
  W1 a + W2 b + c == W2 b + W1 a + c, a*b == b*a, a+b == b+a); `blend(z, a, b)` keeps its order;
- duplicated parameter-free nodes: two nodes with the same parameter-free op reading the same
  nodes compute the same values and are merged (two `linear` nodes never are: each has its own
  weights);
- renumbering the carried hidden states 1..k-1 together (`h_new_i`/`h_prev_i` for i >= 1 swapped
  in pairs): only `h_new_0` leaves the cell, so those slots are interchangeable. Slot 0 is fixed.

Unlike a plain Merkle hash of the tree unfolding (`tree_hash`, kept for comparison), the hash keeps
sharing: one linear node read twice differs from two linear nodes with equal inputs (different
weights, different parameter counts). On the PTB logs the tree hash merges 82 groups whose
members have different `num_params`; this hash merges none (see tests/test_canonical.py).

Algorithm: Merkle digests bottom-up give the initial node colours; ties (distinct nodes with equal
digests) are split by colour refinement over readers and children and, where that is not enough,
by individualisation with the lexicographically smallest serialisation kept (exact canonical
labelling; cells have at most 24 nodes, so the search stays tiny).
"""
import hashlib
import itertools
import json
import weakref
from collections import Counter

from benchmarks.cells.recipe import (COMMUTATIVE, OPS, PARAMETER_FREE, Cell, InvalidCellError,
                              parse_cell, validate)

HASH_VERSION = "nasbench-cell-v1"


# ---------------------------------------------------------------------------------------------
# structure

_LEAF_CODES = {"x": -1, **{f"h_prev_{i}": -2 - i for i in range(64)}}
_LEAVES_BY_HIDDEN: dict[int, dict] = {}


def _leaves(n_hidden: int) -> dict:
    """{leaf name: code} for x and h_prev_0..h_prev_{n_hidden-1}."""
    if n_hidden not in _LEAVES_BY_HIDDEN:
        _LEAVES_BY_HIDDEN[n_hidden] = {"x": -1, **{f"h_prev_{i}": -2 - i for i in range(n_hidden)}}
    return _LEAVES_BY_HIDDEN[n_hidden]


class _Graph:
    """The part of a cell that reaches an output, after merging duplicated parameter-free nodes.

    Nodes are numbered in a topological order; `children[j]` holds node numbers (>= 0) and leaf
    codes (< 0: x -> -1, h_prev_i -> -2 - i); `depth[j]` is the longest path from a leaf.
    """
    __slots__ = ("names", "ops", "outs", "children", "comm", "depth", "n_hidden")

    def __init__(self, cell: Cell):
        nodes = cell.nodes
        n_hidden = cell.n_hidden
        leaves = _leaves(n_hidden)
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(name):
            state[name] = 1
            node = nodes[name]
            if node.op not in OPS:
                raise InvalidCellError(f"node '{name}' has unknown op '{node.op}'", "unknown_op", name)
            for i in node.inputs:
                mark = state.get(i)
                if mark == 2:
                    continue
                if mark == 1:
                    raise InvalidCellError(f"nodes form a cycle through '{i}'; a cell must be acyclic", "cycle", i)
                if i in nodes:
                    visit(i)
                elif i not in leaves:
                    raise InvalidCellError(f"node '{name}' reads '{i}', which is neither a node nor an input",
                                           "undefined_input", name)
            state[name] = 2
            order.append(name)

        out_index = {}
        for i in range(n_hidden):
            out = f"h_new_{i}"
            if out not in nodes:
                raise InvalidCellError(f"the cell has no '{out}'", "missing_output", out)
            out_index[out] = i
            if out not in state:
                visit(out)

        # merge duplicated parameter-free nodes (common subexpressions), in topological order
        klass: dict[str, str] = {}
        table: dict[tuple, str] = {}
        merged = False
        for name in order:
            node = nodes[name]
            if node.op in PARAMETER_FREE:
                ins = tuple(klass.get(i, i) for i in node.inputs) if merged else node.inputs
                key = (node.op, tuple(sorted(ins)) if node.op in COMMUTATIVE else ins)
                first = table.setdefault(key, name)
                if first is not name:
                    merged = True
                klass[name] = first
            else:
                klass[name] = name
        if not merged:
            names, reads = order, {n: nodes[n].inputs for n in order}
        else:
            names, reads = self._merge(order, nodes, klass, out_index)
        position = dict(leaves)
        position.update((n, k) for k, n in enumerate(names))
        self.names = names
        self.ops = [nodes[n].op for n in names]
        self.outs = [out_index.get(n, -1) for n in names]
        self.children = [[position[i] for i in reads[n]] for n in names]
        self.comm = [op in COMMUTATIVE for op in self.ops]
        depth = []
        for ch in self.children:
            depth.append(1 + max((depth[c] for c in ch if c >= 0), default=0))
        self.depth = depth
        self.n_hidden = n_hidden

    @staticmethod
    def _merge(order, nodes, klass, out_index):
        """Keep one node per class (an output if the class has one; every output stays), read
        classes through that node, and re-sort topologically (the kept output may come later)."""
        members: dict[str, list[str]] = {}
        for name in order:
            # klass was filled before later inputs were merged: resolve chains to the class id
            members.setdefault(klass[name], []).append(name)
        chosen, keep = {}, []
        for first, group in members.items():
            outs = [m for m in group if m in out_index]
            chosen[first] = min(outs, key=out_index.get) if outs else first
            keep.extend(outs or [first])
        reads = {n: [chosen.get(klass.get(i, i), i) for i in nodes[n].inputs] for n in keep}
        names: list[str] = []
        placed: set[str] = set()

        def place(name):
            placed.add(name)
            for i in reads[name]:
                if i in reads and i not in placed:
                    place(i)
            names.append(name)

        for name in keep:
            if name not in placed:
                place(name)
        return names, reads


def _child_key(code: int):
    """Sort key of an input reference: x, h_prev_0, h_prev_1, ..., then nodes by position."""
    return (0, -code) if code < 0 else (1, code)


def _ranks(keys: list) -> tuple[list[int], int]:
    distinct = sorted(set(keys))
    rank = {k: r for r, k in enumerate(distinct)}
    return [rank[k] for k in keys], len(distinct)


def _labelled_rows(g: _Graph, perm: tuple[int, ...]) -> tuple:
    """Canonical rows (op, out slot, inputs) of `g` with hidden slot i renamed perm[i]."""
    n = len(g.names)
    if any(p != i for i, p in enumerate(perm)):
        children = [[c if c >= -1 else -2 - perm[-2 - c] for c in ch] for ch in g.children]
        outs = [perm[o] if o >= 0 else -1 for o in g.outs]
    else:
        children, outs = g.children, g.outs

    # Merkle digests bottom-up (nodes are numbered topologically) give the first colouring
    digests: list[bytes] = []
    blake2b = hashlib.blake2b
    for j in range(n):
        parts = [digests[c] if c >= 0 else _LEAF_DIGESTS[c] for c in children[j]]
        if g.comm[j]:
            parts.sort()
        digests.append(blake2b(b"%s|%d|%s" % (_OP_BYTES[g.ops[j]], outs[j], b",".join(parts)),
                               digest_size=16).digest())
    colour, n_classes = _ranks(digests)
    if n_classes == n:
        return _serialize(g, children, outs, colour)

    readers: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for j in range(n):
        for role, c in enumerate(children[j]):
            if c >= 0:
                readers[c].append((j, -1 if g.comm[j] else role))

    def refine(col, count):
        while True:
            signatures = []
            for j in range(n):
                ch = [col[c] if c >= 0 else c for c in children[j]]
                if g.comm[j]:
                    ch.sort()
                signatures.append((col[j], tuple(ch), tuple(sorted((col[p], r) for p, r in readers[j]))))
            new, new_count = _ranks(signatures)
            if new_count == count:
                return new, new_count
            col, count = new, new_count

    best = None

    def search(col, count):
        nonlocal best
        if count == n:
            rows = _serialize(g, children, outs, col)
            if best is None or rows < best:
                best = rows
            return
        sizes = Counter(col)
        target = min(c for c, k in sizes.items() if k > 1)
        for j in range(n):
            if col[j] == target:
                split, split_count = _ranks([(c, 0 if i == j else 1) for i, c in enumerate(col)])
                search(*refine(split, split_count))

    search(*refine(colour, n_classes))
    return best


_LEAF_DIGESTS = {code: b"L%d" % code for code in _LEAF_CODES.values()}   # up to h_prev_63
_OP_BYTES = {op: op.encode() for op in OPS}


def _serialize(g: _Graph, children, outs, colour) -> tuple:
    """Rows in canonical topological order (by depth, then colour); inputs by position."""
    order = sorted(range(len(children)), key=lambda j: (g.depth[j], colour[j]))
    position = [0] * len(order)
    for k, j in enumerate(order):
        position[j] = k
    rows = []
    for j in order:
        refs = [position[c] if c >= 0 else c for c in children[j]]
        if g.comm[j]:
            refs.sort(key=_child_key)
        rows.append((g.ops[j], outs[j], tuple(refs)))
    return tuple(rows)


def _canonical_rows(cell: Cell) -> tuple:
    """The canonical serialisation; smallest over the interchangeable hidden slots 1..k-1."""
    g = _Graph(cell)
    best = None
    for tail in itertools.permutations(range(1, g.n_hidden)):
        rows = _labelled_rows(g, (0,) + tail)
        if best is None or rows < best:
            best = rows
    return best


def _digest(n_hidden: int, rows) -> str:
    payload = json.dumps([HASH_VERSION, n_hidden, rows], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# public API

def canonical_hash(cell) -> str:
    """sha256 hex of the cell's canonical form (validated first: InvalidCellError if invalid)."""
    cell = validate(parse_cell(cell))
    return _digest(cell.n_hidden, _canonical_rows(cell))


def canonical_form(cell) -> dict:
    """The canonical recipe: outputs `h_new_i`, other nodes `node_0..` in canonical topological order,
    commutative inputs sorted (x, h_prev_0.., then nodes). Equal for cells with equal hashes."""
    cell = validate(parse_cell(cell))
    rows = _canonical_rows(cell)
    names, k = [], 0
    for _, out, _ in rows:
        if out >= 0:
            names.append(f"h_new_{out}")
        else:
            names.append(f"node_{k}")
            k += 1

    def name_of(code):
        if code >= 0:
            return names[code]
        return "x" if code == -1 else f"h_prev_{-2 - code}"

    return {names[j]: {"op": op, "input": [name_of(c) for c in refs]} for j, (op, out, refs) in enumerate(rows)}


def tree_hash(cell) -> str:
    """Plain Merkle hash of the tree unfolding from the outputs, for comparison only.

    It ignores sharing (one linear node read twice == two linear nodes with equal inputs), so it
    merges cells with different parameter counts, and it keeps hidden slots 1..k-1 fixed."""
    cell = validate(parse_cell(cell))
    memo: dict[str, str] = {}

    def digest(name):
        if name not in cell.nodes:
            return name
        if name not in memo:
            node = cell.nodes[name]
            parts = [digest(i) for i in node.inputs]
            if node.op in COMMUTATIVE:
                parts.sort()
            memo[name] = hashlib.sha256(f"{node.op}({','.join(parts)})".encode()).hexdigest()
        return memo[name]

    outs = "|".join(digest(o) for o in cell.outputs)
    return hashlib.sha256(f"tree|{outs}".encode()).hexdigest()


def hash_or_none(cell) -> str | None:
    """canonical_hash without validation, None for a cell that cannot be hashed (cycle, unknown op...).
    For bulk use on benchmark recipes, which all validate."""
    try:
        cell = parse_cell(cell)
        return _digest(cell.n_hidden, _canonical_rows(cell))
    except (InvalidCellError, KeyError, AttributeError, RecursionError):
        return None


def find_duplicates(recipes) -> list[list]:
    """Groups of recipes that share a canonical form, each group sorted, groups by first member.

    `recipes`: a mapping key -> recipe (groups hold keys) or a sequence (groups hold positions);
    a recipe is anything `parse_cell` accepts. Recipes that cannot be hashed are left out.
    """
    items = recipes.items() if hasattr(recipes, "items") else enumerate(recipes)
    groups: dict[str, list] = {}
    for key, recipe in items:
        h = hash_or_none(recipe)
        if h is not None:
            groups.setdefault(h, []).append(key)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])


# ---------------------------------------------------------------------------------------------
# benchmark index

_MEMO: dict = {}     # content key -> (hashes, index)
_KEYS = weakref.WeakKeyDictionary()     # table -> content key


def _table(benchmark):
    return getattr(benchmark, "search", benchmark)


def _content_key(table) -> str:
    try:
        return _KEYS[table]
    except (KeyError, TypeError):
        pass
    key = _compute_content_key(table)
    try:
        _KEYS[table] = key
    except TypeError:       # not weak-referenceable: recomputed next time
        pass
    return key


def _compute_content_key(table) -> str:
    h = hashlib.sha256(HASH_VERSION.encode())
    for recipe in table.recipes:
        h.update(recipe.encode())
        h.update(b"\n")
    return f"{getattr(table, 'name', 'table')}-{h.hexdigest()[:16]}"


def benchmark_hashes(benchmark) -> list:
    """Canonical hash of every architecture in row order (None where a recipe cannot be hashed).

    `benchmark`: a Benchmark or its SearchTable. Memoised per process and cached under
    `cache_dir()/cell_hashes/` keyed by the recipes' content and HASH_VERSION (written atomically).
    """
    return _index(benchmark)[0]


def _index(benchmark):
    table = _table(benchmark)
    key = _content_key(table)
    if key in _MEMO:
        return _MEMO[key]
    from benchmarks.core.paths import cache_dir

    path = cache_dir() / "cell_hashes" / f"{key}.json"
    hashes = None
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
            if stored.get("version") == HASH_VERSION and len(stored.get("hashes", ())) == len(table.recipes):
                hashes = stored["hashes"]
        except (OSError, ValueError, AttributeError):
            hashes = None
    if hashes is None:
        hashes = [hash_or_none(r) for r in table.recipes]
        from benchmarks.core.atomic import write_json_atomic

        try:
            write_json_atomic(path, {"version": HASH_VERSION, "hashes": hashes})
        except OSError:
            pass    # a read-only cache only costs speed
    ids = [int(i) for i in table.ids]
    index: dict[str, tuple] = {}
    for rid, h in zip(ids, hashes):
        if h is not None:
            index[h] = index.get(h, ()) + (rid,)
    _MEMO[key] = (hashes, index)
    return _MEMO[key]


def lookup_all(benchmark, cell) -> tuple:
    """Every recepie_id (ascending) whose architecture has the cell's canonical form; () if none."""
    return _index(benchmark)[1].get(canonical_hash(cell), ())


def lookup(benchmark, cell):
    """The smallest recepie_id with the cell's canonical form, or None. InvalidCellError if invalid."""
    found = lookup_all(benchmark, cell)
    return found[0] if found else None


def lookup_recipe(benchmark, recipe_text_or_path):
    """(cell, recepie_id or None) for a recipe given as JSON text, a file path or a dict.

    The id is the smallest one among the benchmark's architectures with the same canonical form.
    InvalidCellError (a UserError) with the reason when the recipe is malformed or invalid.
    """
    cell = validate(parse_cell(recipe_text_or_path))
    return cell, lookup(benchmark, cell)


def duplicate_summary(benchmark) -> dict:
    """How many architectures share a canonical form with another one."""
    hashes = benchmark_hashes(benchmark)
    ids = [int(i) for i in _table(benchmark).ids]
    by_hash: dict[str, list] = {}
    for rid, h in zip(ids, hashes):
        if h is not None:
            by_hash.setdefault(h, []).append(rid)
    groups = sorted((sorted(g) for g in by_hash.values() if len(g) > 1), key=lambda g: (-len(g), g[0]))
    in_groups = sum(len(g) for g in groups)
    return {
        "architectures": len(hashes),
        "unhashable": sum(1 for h in hashes if h is None),
        "distinct_canonical_forms": len(by_hash),
        "duplicate_groups": len(groups),
        "architectures_in_duplicate_groups": in_groups,
        "redundant_architectures": in_groups - len(groups),
        "largest_groups": groups[:5],
    }
