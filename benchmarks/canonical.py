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
from collections import Counter

from benchmarks.cells import (COMMUTATIVE, OPS, PARAMETER_FREE, Cell, InvalidCellError, _H_NEW, _H_PREV,
                              parse_cell, validate)

HASH_VERSION = "nasbench-cell-v1"


# ---------------------------------------------------------------------------------------------
# structure

class _Graph:
    """The part of a cell that reaches an output, after merging duplicated parameter-free nodes."""
    __slots__ = ("names", "ops", "outs", "children", "comm", "n_hidden")

    def __init__(self, cell: Cell):
        nodes = cell.nodes
        n_hidden = cell.n_hidden
        outputs = [f"h_new_{i}" for i in range(n_hidden)]
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(name):
            mark = state.get(name)
            if mark == 2:
                return
            if mark == 1:
                raise InvalidCellError(f"nodes form a cycle through '{name}'; a cell must be acyclic", "cycle", name)
            node = nodes.get(name)
            if node is None:
                raise InvalidCellError(f"'{name}' is not a node of the cell", "undefined_input", name)
            if node.op not in OPS:
                raise InvalidCellError(f"node '{name}' has unknown op '{node.op}'", "unknown_op", name)
            state[name] = 1
            for i in node.inputs:
                if i not in nodes:
                    if i != "x" and not ((m := _H_PREV.fullmatch(i)) and int(m.group(1)) < n_hidden):
                        raise InvalidCellError(f"node '{name}' reads '{i}', which is neither a node nor an input",
                                               "undefined_input", name)
                else:
                    visit(i)
            state[name] = 2
            order.append(name)

        for out in outputs:
            visit(out)

        # merge duplicated parameter-free nodes (common subexpressions), in topological order
        klass: dict[str, str] = {}
        table: dict[tuple, str] = {}
        members: dict[str, list[str]] = {}
        reads: dict[str, list[str]] = {}
        for name in order:
            node = nodes[name]
            ins = [klass.get(i, i) for i in node.inputs]
            reads[name] = ins
            if node.op in PARAMETER_FREE:
                key = (node.op, tuple(sorted(ins)) if node.op in COMMUTATIVE else tuple(ins))
                first = table.setdefault(key, name)
            else:
                first = name
            klass[name] = first
            members.setdefault(first, []).append(name)
        out_index = {f"h_new_{i}": i for i in range(n_hidden)}
        keep: list[str] = []
        chosen: dict[str, str] = {}
        for first, group in members.items():
            outs_in_group = [m for m in group if m in out_index]
            chosen[first] = min(outs_in_group, key=out_index.get) if outs_in_group else first
            keep.extend(outs_in_group if outs_in_group else [first])
        # reads hold class ids; every class is read through its chosen member. Re-sort
        # topologically: a chosen output may come after readers of its class's first member.
        remapped = {n: [chosen.get(i, i) for i in reads[n]] for n in keep}
        if len(keep) == len(order):     # nothing merged: `order` is already topological
            names = order
        else:
            names = self._toposort(keep, remapped)
        position = {n: k for k, n in enumerate(names)}

        def ref(i):
            return position[i] if i in position else _leaf_code(i)

        self.names = names
        self.ops = [nodes[n].op for n in names]
        self.outs = [out_index.get(n, -1) for n in names]
        self.children = [[ref(i) for i in remapped[n]] for n in names]
        self.comm = [op in COMMUTATIVE for op in self.ops]
        self.n_hidden = n_hidden

    @staticmethod
    def _toposort(keep, remapped) -> list[str]:
        names: list[str] = []
        placed: set[str] = set()

        def place(name):
            if name in placed or name not in remapped:
                return
            placed.add(name)
            for i in remapped[name]:
                place(i)
            names.append(name)

        for name in keep:
            place(name)
        return names


def _leaf_code(name: str) -> int:
    """x -> -1, h_prev_i -> -(2 + i): inputs are leaves labelled by their (fixed) names."""
    if name == "x":
        return -1
    return -2 - int(_H_PREV.fullmatch(name).group(1))


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

    def leaf(code):     # rename h_prev slots
        return code if code == -1 else -2 - perm[-2 - code]

    children = [[leaf(c) if c < 0 else c for c in ch] for ch in g.children]
    outs = [perm[o] if o >= 0 else -1 for o in g.outs]

    # Merkle digests bottom-up (names are topological) give the first colouring
    digests: list[bytes] = []
    for j in range(n):
        parts = [digests[c] if c >= 0 else b"L%d" % c for c in children[j]]
        if g.comm[j]:
            parts.sort()
        digests.append(hashlib.blake2b(b"%s|%d|%s" % (g.ops[j].encode(), outs[j], b",".join(parts)),
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


def _serialize(g: _Graph, children, outs, colour) -> tuple:
    """Rows in canonical topological order (ready nodes taken by smallest colour); inputs by position."""
    import heapq

    n = len(g.names)
    pending = [sum(1 for c in ch if c >= 0) for ch in children]
    readers: list[list[int]] = [[] for _ in range(n)]
    for j, ch in enumerate(children):
        for c in ch:
            if c >= 0:
                readers[c].append(j)
    ready = [(colour[j], j) for j in range(n) if pending[j] == 0]
    heapq.heapify(ready)
    position = [0] * n
    order = []
    while ready:
        _, j = heapq.heappop(ready)
        position[j] = len(order)
        order.append(j)
        for r in readers[j]:
            pending[r] -= 1
            if pending[r] == 0:
                heapq.heappush(ready, (colour[r], r))
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
    for op, out, _ in rows:
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


def _table(benchmark):
    return getattr(benchmark, "search", benchmark)


def _content_key(table) -> str:
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
    from benchmarks.paths import cache_dir

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
        from benchmarks.atomic import write_json_atomic

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
