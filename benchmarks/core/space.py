"""What a search space offers to algorithms, and the table-level helpers built on it.

A search space describes itself (like a ConfigSpace or an Optuna distribution does), so that one
algorithm runs on every benchmark that offers what it needs:

- `sample(rng)`: an architecture drawn at random from the whole space;
- `mutate(arch, rng)`: a random neighbour (one choice changed);
- `neighbours(arch)`: every architecture one change away;
- `encode(arch)`: a fixed-length float vector (the space's own encoding, feature kind `encoding_kind`);
- `distance(encodings, vector)`: the distance [n] of each encoding row to one vector, for snapping;
- `choices()`: the space as an ordered list of categorical `Choice`s, each active under a condition
  on an earlier one, with `from_values` / `to_values` to convert; from it come a ConfigSpace
  (`configuration_space`), a hyperopt space and Optuna's define-by-run suggestions, so libraries
  search the native space without a hand-written definition per benchmark;
- `parse(recipe)`: an architecture from the JSON object a benchmark table stores per row.

`OFFERS` names these operations; a space's `offers` says which it has. A benchmark's catalog entry
adds what the data offers (`epochs`: several fidelities; `graph2vec`: learned cell embeddings;
`proxies`: training-free score tables), and algorithms state what they `need`
(`optimizers.registry`). An architecture proposed anywhere in a space is evaluated by snapping it to
the nearest evaluated one (`Snapper`), since a benchmark only has recorded results for its table.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

OFFERS = {
    "sample": "random architectures from the whole space",
    "mutate": "a random one-change neighbour of an architecture",
    "neighbours": "every one-change neighbour of an architecture",
    "encoding": "a fixed-length vector per architecture (the space's own encoding)",
    "distance": "a distance between encodings, for snapping proposals to evaluated architectures",
    "configspace": "the space as conditional categorical choices (ConfigSpace, hyperopt, Optuna)",
    "epochs": "several fidelities: training can stop after any epoch and continue from its checkpoint",
    "graph2vec": "graph2vec embeddings of recurrent cells (feature kinds shipped-10d, g2v-10d, g2v-50d)",
    "proxies": "training-free score tables of recurrent cells (nasbench proxies build)",
}


@dataclass(frozen=True)
class Choice:
    """One categorical decision of a space: `name`, its `values` (in order), and, if it exists only for
    some architectures, the earlier choice `parent` and the parent's `active_for` values."""
    name: str
    values: tuple
    parent: str | None = None
    active_for: tuple = ()


class SearchSpace:
    """Base class of a search space (see the module docstring). Subclasses set `name`, `offers`,
    `encoding_kind` and implement what they offer."""
    name: str = ""
    offers: frozenset = frozenset()
    encoding_kind: str = "encoding"      # the feature kind under which `encode` is available

    def parse(self, recipe: dict):
        raise NotImplementedError

    def sample(self, rng: np.random.Generator):
        raise NotImplementedError

    def mutate(self, arch, rng: np.random.Generator):
        raise NotImplementedError

    def neighbours(self, arch) -> list:
        raise NotImplementedError

    def encode(self, arch) -> np.ndarray:
        raise NotImplementedError

    def distance(self, encodings: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """Distance [n] of each row of `encodings` [n, d] to `vector` [d]; L1 by default."""
        return np.abs(np.asarray(encodings) - np.asarray(vector)[None, :]).sum(axis=1)

    def choices(self) -> list[Choice]:
        raise NotImplementedError

    def from_values(self, values: dict):
        """The architecture of a dict {choice name: value} (active choices; extra keys are ignored)."""
        raise NotImplementedError

    def to_values(self, arch) -> dict:
        """{choice name: value} of the active choices of `arch`."""
        raise NotImplementedError

    def configuration_space(self, seed: int = 0):
        """A ConfigSpace (1.x) ConfigurationSpace of `choices()`, seeded with `seed`."""
        return configuration_space(self.choices(), seed)

    def from_configuration(self, config):
        """The architecture of a ConfigSpace Configuration (or a plain dict)."""
        return self.from_values(dict(config))


class FlatCategoricalSpace(SearchSpace):
    """A space of independent categorical choices (NMTHPO's, NMTLC's): subclasses give `domains` ({choice:
    its values, in order}), `config_type` (a dataclass whose fields are the choices, with `to_dict`) and
    `validate`. Sampling, mutation, neighbours and the ConfigSpace choices follow from them."""
    config_type: type = dict

    @property
    def domains(self) -> dict:
        raise NotImplementedError

    @property
    def size(self) -> int:
        import math

        return math.prod(len(values) for values in self.domains.values())

    def sample(self, rng: np.random.Generator):
        """Uniform over each choice's values, in the order of `domains`."""
        return self.config_type(**{name: values[int(rng.integers(len(values)))] for name, values in self.domains.items()})

    def mutate(self, config, rng: np.random.Generator):
        """One choice, drawn uniformly, changed to another of its values drawn uniformly."""
        names = list(self.domains)
        name = names[int(rng.integers(len(names)))]
        rest = [v for v in self.domains[name] if v != getattr(config, name)]
        return self.config_type(**{**config.to_dict(), name: rest[int(rng.integers(len(rest)))]})

    def neighbours(self, config) -> list:
        """Every configuration with one choice changed."""
        return [self.config_type(**{**config.to_dict(), name: value}) for name, values in self.domains.items()
                for value in values if value != getattr(config, name)]

    def choices(self) -> list[Choice]:
        return [Choice(name, tuple(values)) for name, values in self.domains.items()]

    def from_values(self, values: dict):
        return self.validate(self.config_type(**{name: values[name] for name in self.domains}))

    def to_values(self, config) -> dict:
        return config.to_dict()


def configuration_space(choices: list[Choice], seed: int = 0):
    """ConfigurationSpace with one Categorical per choice and an InCondition per conditional one."""
    from ConfigSpace import Categorical, ConfigurationSpace, InCondition

    cs = ConfigurationSpace(seed=seed)
    hps = {c.name: Categorical(c.name, list(c.values)) for c in choices}
    cs.add(*hps.values())
    conditions = [InCondition(hps[c.name], hps[c.parent], list(c.active_for)) for c in choices if c.parent]
    if conditions:
        cs.add(*conditions)
    return cs


def hyperopt_space(choices: list[Choice]) -> dict:
    """hyperopt's version of `choices`: every choice an `hp.choice`; a choice that conditions others
    becomes a branch (`"~parent"`) whose options hold the parent's value and the choices active for
    it. `flatten_hyperopt` turns a sample back into {choice: value}. One level of conditions."""
    from hyperopt import hp

    parents = {c.parent for c in choices if c.parent}
    base = {c.name: hp.choice(c.name, list(c.values)) for c in choices if not c.parent and c.name not in parents}
    for parent in (c for c in choices if c.name in parents):
        branches = []
        for value in parent.values:
            branch = {parent.name: value}
            for child in choices:
                if child.parent == parent.name and value in child.active_for:
                    # hyperopt needs one label per node: a choice active under several parent values
                    # (layer 11 of a 10-12 layer space) gets one per branch; a choice active under one
                    # keeps its plain name
                    label = child.name if len(child.active_for) == 1 else f"{child.name}|{parent.name}={value}"
                    branch[child.name] = hp.choice(label, list(child.values))
            branches.append(branch)
        base[f"~{parent.name}"] = hp.choice(parent.name, branches)
    return base


def flatten_hyperopt(values: dict) -> dict:
    """{choice: value} of a sample of `hyperopt_space` (its branches merged in)."""
    out = {k: v for k, v in values.items() if not k.startswith("~")}
    for key, branch in values.items():
        if key.startswith("~"):
            out.update(branch)
    return out


def suggest_optuna(trial, choices: list[Choice]) -> dict:
    """Define-by-run: suggest the active choices in their order on an Optuna trial; {choice: value}."""
    values: dict = {}
    for choice in choices:
        if choice.parent is not None and values.get(choice.parent) not in choice.active_for:
            continue
        values[choice.name] = trial.suggest_categorical(choice.name, list(choice.values))
    return values


_ARCHS: dict = {}
_ENCODINGS: dict = {}


def architectures(search) -> tuple:
    """The architecture of every row of a table whose `space` parses recipes (memoised per table; a
    tuple of immutable architectures, shared by every trial in this process)."""
    cached = _ARCHS.get(id(search))
    if cached is not None and cached[0] is search:
        return cached[1]
    archs = tuple(search.space.parse(json.loads(recipe)) for recipe in search.recipes)
    _ARCHS[id(search)] = (search, archs)
    return archs


def encodings(search) -> np.ndarray:
    """The space's encoding of every row [n, d] (read-only, memoised per table)."""
    cached = _ENCODINGS.get(id(search))
    if cached is not None and cached[0] is search:
        return cached[1]
    matrix = np.array([search.space.encode(arch) for arch in architectures(search)], dtype=np.float64)
    from benchmarks.core.table import immutable

    matrix = immutable(matrix)              # shared by every trial in this process: nothing may change it
    _ENCODINGS[id(search)] = (search, matrix)
    return matrix


class Snapper:
    """Proposals (architectures anywhere in the space) -> the nearest untrained evaluated row by the
    space's `distance` on `encodings`, ties broken by a random order drawn once from `rng`."""

    def __init__(self, space: SearchSpace, encodings: np.ndarray, rng: np.random.Generator):
        self.space, self.encodings = space, np.asarray(encodings)
        self.trained = np.zeros(len(self.encodings), dtype=bool)
        self.tie_rank = rng.permutation(len(self.encodings))
        self.distances: list = []          # per snap: the distance to the chosen row

    def snap(self, arch, mark: bool = True) -> int | None:
        """The chosen row (marked trained unless `mark` is False), or None when every row is trained."""
        if self.trained.all():
            return None
        raw = np.asarray(self.space.distance(self.encodings, self.space.encode(arch)))
        worst = np.iinfo(np.int64).max if raw.dtype.kind in "iu" else np.inf
        distance = np.where(self.trained, worst, raw)
        best = np.flatnonzero(distance == distance.min())
        row = int(best[np.argmin(self.tie_rank[best])])
        self.trained[row] = mark or self.trained[row]
        self.distances.append(distance[row].item())
        return row
