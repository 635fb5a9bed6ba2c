"""graph2vec (Narayanan et al., 2017) embeddings of NAS-Bench-NLP recurrent cells.

Each cell becomes a "document" of structural words:
- its Weisfeiler-Lehman (WL) rooted-subtree labels: nodes start labelled by their op (inputs `x`,
  `h_prev_i` and outputs `h_new_i` by their role), and each of `WL_ITERATIONS` iterations
  relabels a node by a hash of its label and the sorted labels of its predecessors
  (position-tagged where the op is order-sensitive, i.e. `blend`) and of its successors;
- one word per input-to-output path (the op labels along it), which carries what local WL
  neighbourhoods miss: whether the recurrence h_prev -> h_new passes through a squashing op.
The documents are embedded with gensim's Doc2Vec in PV-DBOW mode (dm=0), one worker, a fixed seed,
a deterministic word hash (so the vectors do not depend on PYTHONHASHSEED) and a seeded document
order (so nothing correlated with row order leaks into the vectors; the shipped NAS-Bench-NLP
features were trained with all flawed cells first, which such a leak rewards).
"""
from __future__ import annotations

import collections
import gc
import hashlib
import json
import re
import sys
from typing import Callable, Iterable

import numpy as np

from benchmarks.core.errors import UserError

# Bump when the documents or the training recipe change: feature caches are keyed by it.
ALGORITHM_VERSION = "g2v-2"
WL_ITERATIONS = 2
DEFAULT_EPOCHS = 30
PATH_MAX_EDGES = 8          # longest input-to-output path turned into a word
PATH_MAX_WORDS = 4096       # bound on path words per cell (the count can grow exponentially)
ORDERED_OPS = frozenset({"blend"})  # ops whose input order matters: blend(z, a, b) = z*a + (1-z)*b

_H_PREV = re.compile(r"^h_prev_(\d+)$")
_H_NEW = re.compile(r"^h_new_(\d+)$")


def stable_hash(text: str) -> int:
    """A 63-bit hash of `text` that is the same in every process (unlike Python's `hash`)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little") >> 1


def _short(text: str) -> str:
    """A compressed WL label: 16 hex digits of a stable hash."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _as_cell(recipe: str | dict) -> dict:
    if isinstance(recipe, str):
        try:
            recipe = json.loads(recipe)
        except json.JSONDecodeError as exc:
            raise UserError(f"recipe is not valid JSON ({exc}); pass the recipe string of a log") from exc
    if not isinstance(recipe, dict) or not recipe:
        raise UserError("recipe must be a non-empty JSON object {node: {'op': ..., 'input': [...]}}")
    return recipe


def initial_labels(cell: dict) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Role/op label of every node, and each op node's input list.

    Returns (labels, inputs): leaves `x` -> "x", `h_prev_i` -> "h_prev_i"; op nodes -> their op,
    prefixed by "h_new_i:" when the node is an output of the cell.
    """
    labels: dict[str, str] = {}
    inputs: dict[str, list[str]] = {}
    for name, node in cell.items():
        if not isinstance(node, dict) or "op" not in node or not isinstance(node.get("input"), list):
            raise UserError(f"recipe node {name!r} must be an object with 'op' and an 'input' list")
        out = _H_NEW.match(name)
        labels[name] = f"{name}:{node['op']}" if out else str(node["op"])
        inputs[name] = [str(i) for i in node["input"]]
    for srcs in inputs.values():
        for src in srcs:
            if src in labels:
                continue
            if src == "x" or _H_PREV.match(src):
                labels[src] = src
            else:
                raise UserError(f"recipe input {src!r} is neither a node of the cell, 'x' nor 'h_prev_i'")
    return labels, inputs


def path_words(labels: dict[str, str], succ: dict[str, list[str]], max_edges: int = PATH_MAX_EDGES) -> list[str]:
    """One word per path from a cell input (`x`, `h_prev_i`) to an output `h_new_i` of at most
    `max_edges` edges: the initial labels along it, e.g. "p:h_prev_0>linear>h_new_0:activation_tanh".

    These carry what WL's local neighbourhoods miss: whether the recurrence h_prev -> h_new is squashed.
    """
    words: list[str] = []

    def walk(node: str, seq: list[str]) -> None:
        if len(words) >= PATH_MAX_WORDS:
            return
        if _H_NEW.match(node) and len(seq) > 1:
            words.append("p:" + ">".join(seq))
        if len(seq) > max_edges:
            return
        for nxt in succ.get(node, ()):
            walk(nxt, seq + [labels[nxt]])

    for source in sorted(n for n in labels if n == "x" or _H_PREV.match(n)):
        walk(source, [labels[source]])
    return words


def cell_document(recipe: str | dict, iterations: int = WL_ITERATIONS, paths: bool = True) -> list[str]:
    """The words of one cell, sorted: every node's WL label at iterations 0..`iterations`
    (prefixed by the iteration) and, if `paths`, its input-to-output path words.

    Invariant to renaming the cell's internal nodes.
    """
    cell = _as_cell(recipe)
    labels, inputs = initial_labels(cell)
    ops = {name: str(node["op"]) for name, node in cell.items()}
    succ: dict[str, list[str]] = {name: [] for name in labels}
    for dst, srcs in inputs.items():
        for src in srcs:
            succ[src].append(dst)
    words = [f"0_{lab}" for lab in labels.values()]
    if paths:
        words.extend(path_words(labels, succ))
    for it in range(1, iterations + 1):
        new = {}
        for node, lab in labels.items():
            srcs = inputs.get(node, [])
            if ops.get(node) in ORDERED_OPS:
                preds = [f"{k}.{labels[s]}" for k, s in enumerate(srcs)]
            else:
                preds = sorted(labels[s] for s in srcs)
            succs = sorted(labels[d] for d in succ[node])
            new[node] = _short(f"{lab}|<{','.join(preds)}|>{','.join(succs)}")
        labels = new
        words.extend(f"{it}_{lab}" for lab in labels.values())
    return sorted(words)


def build_graph2vec(recipes: list[str], dims: int, seed: int = 0, epochs: int = DEFAULT_EPOCHS,
                    iterations: int = WL_ITERATIONS, paths: bool = True,
                    progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """PV-DBOW graph2vec vectors of `recipes`: float64 [n, dims], row i for recipes[i].

    Deterministic for given arguments in any process. Words seen only once in the whole
    collection are dropped (they carry no shared signal and triple the training time).
    `progress(done_epochs, epochs)` is called after each training epoch when given.
    """
    if dims < 1:
        raise UserError(f"graph2vec dimension must be >= 1, got {dims}")
    if epochs < 1:
        raise UserError(f"graph2vec epochs must be >= 1, got {epochs}")
    if not recipes:
        raise UserError("graph2vec needs at least one recipe")
    from gensim.models.callbacks import CallbackAny2Vec
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    # Equal words as one string object each (interned): gensim looks every word of every document up in its
    # vocabulary once per epoch, and a key found by identity skips the string comparison (about a tenth of
    # the training time on PTB; the vectors are the same).
    words = [[sys.intern(w) for w in cell_document(r, iterations, paths)] for r in recipes]
    counts = collections.Counter(w for doc in words for w in doc)
    min_count = 2 if any(c >= 2 for c in counts.values()) else 1   # words seen once carry no shared signal
    # a seeded order, so that no property correlated with row order (ids) leaks into the vectors
    order = np.random.default_rng(seed).permutation(len(words))
    docs = [TaggedDocument(words[i], [int(i)]) for i in order]
    callbacks: Iterable = ()
    if progress is not None:
        class _Progress(CallbackAny2Vec):
            def __init__(self):
                self.done = 0

            def on_epoch_end(self, model):
                self.done += 1
                progress(self.done, epochs)

        callbacks = [_Progress()]
    model = Doc2Vec(vector_size=dims, dm=0, min_count=min_count, sample=0, negative=5,
                    workers=1, seed=seed, epochs=epochs, hashfxn=stable_hash)
    model.build_vocab(docs)
    collecting = gc.isenabled()
    gc.disable()     # its passes over the corpus cost ~5% of the training; cycles made meanwhile are freed after
    try:
        model.train(docs, total_examples=len(docs), epochs=epochs, callbacks=list(callbacks))
    finally:
        if collecting:
            gc.enable()
    return np.asarray(model.dv.vectors[[model.dv.get_index(i) for i in range(len(docs))]], dtype=np.float64)
