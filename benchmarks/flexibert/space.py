"""The FlexiBERT search space (`BERT_search_space.json`): architectures, validation, encoding, mutation.

An architecture is a hidden size and 2 or 4 encoder layers; each layer has an operation (type SA,
LT or DSC with its parameter: SA attention SDP or WMA, LT transform DFT or DCT, DSC kernel 5 or 9),
a number of operation heads, a feed-forward dimension and a number of feed-forward layers. With the
published choices that is 2 x (48^2 + 48^4) = 10,621,440 architectures.

Encoding (`encode`, 38 numbers): hidden size and layer count as 0/1; per layer slot (4 slots, all
zero when the layer is absent) the operation one-hot over the 6 (type, parameter) pairs, then heads,
feed-forward dimension and count as 0/1 (the larger value is 1). One-hot for the operation because
its 6 values have no order (an ordinal code would call DCT "between" DFT and SDP); the other choices
have two values each, where one-hot and ordinal are the same up to a duplicated column. Hamming
distance on this encoding counts differing entries: changing an operation costs 2, any other single
choice 1, adding or removing the two top layers 1 plus their entries.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError, UserError
from benchmarks.core.space import Choice, SearchSpace

LAYER_KEYS = ("operation_type", "operation_parameter", "num_operation_heads", "feed_forward_dimension",
              "num_feed_forward")


@dataclass(frozen=True)
class Layer:
    operation_type: str           # "SA", "LT" or "DSC"
    operation_parameter: str      # SA: "SDP"/"WMA"; LT: "DFT"/"DCT"; DSC: kernel size as text ("5"/"9")
    num_operation_heads: int
    feed_forward_dimension: int
    num_feed_forward: int

    @property
    def operation(self) -> str:
        return f"{self.operation_type}:{self.operation_parameter}"


@dataclass(frozen=True)
class Architecture:
    hidden_size: int
    layers: tuple[Layer, ...]

    def to_dict(self) -> dict:
        """The `model_hparam_overrides` form of NAS-Bench-BERT (DSC kernels as integers)."""
        def value(layer: Layer, key: str):
            item = getattr(layer, key)
            return int(item) if key == "operation_parameter" and layer.operation_type == "DSC" else item
        return {"hidden_size": self.hidden_size,
                "nas_config": {"encoder_layers": [{k: value(layer, k) for k in LAYER_KEYS} for layer in self.layers]}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class FlexiBertSpace(SearchSpace):
    """The FlexiBERT space; offers sampling, mutation, neighbours, the 38-number encoding, Hamming
    distance and its conditional choices (`benchmarks.core.space`)."""
    name = "flexibert"
    offers = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
    encoding_kind = "bert-encoding"
    hidden_sizes: tuple[int, ...]
    layer_counts: tuple[int, ...]
    operations: tuple[tuple[str, str], ...]     # (type, parameter) pairs
    heads: tuple[int, ...]
    ff_dimensions: tuple[int, ...]
    ff_counts: tuple[int, ...]

    @property
    def choices_per_layer(self) -> int:
        return len(self.operations) * len(self.heads) * len(self.ff_dimensions) * len(self.ff_counts)

    @property
    def size(self) -> int:
        """Number of architectures in the space."""
        return len(self.hidden_sizes) * sum(self.choices_per_layer ** n for n in self.layer_counts)

    @property
    def max_layers(self) -> int:
        return max(self.layer_counts)

    @property
    def encoding_length(self) -> int:
        return 2 + self.max_layers * (len(self.operations) + 3)

    def validate(self, arch: Architecture) -> Architecture:
        """`arch` if it is in the space, else UserError naming the first choice that is not."""
        if arch.hidden_size not in self.hidden_sizes:
            raise UserError(f"hidden_size {arch.hidden_size} is not one of {self.hidden_sizes}")
        if len(arch.layers) not in self.layer_counts:
            raise UserError(f"{len(arch.layers)} encoder layers; the space has {self.layer_counts}")
        for k, layer in enumerate(arch.layers, 1):
            checks = ((layer.operation_type, layer.operation_parameter) in self.operations, "operation",
                      layer.operation, [f"{t}:{p}" for t, p in self.operations]), \
                     (layer.num_operation_heads in self.heads, "num_operation_heads", layer.num_operation_heads,
                      self.heads), \
                     (layer.feed_forward_dimension in self.ff_dimensions, "feed_forward_dimension",
                      layer.feed_forward_dimension, self.ff_dimensions), \
                     (layer.num_feed_forward in self.ff_counts, "num_feed_forward", layer.num_feed_forward,
                      self.ff_counts)
            for ok, key, value, allowed in checks:
                if not ok:
                    raise UserError(f"layer {k}: {key} {value} is not one of {list(allowed)}")
        return arch

    def parse(self, overrides: dict) -> Architecture:
        """An architecture from NAS-Bench-BERT's `model_hparam_overrides` dict; UserError if malformed."""
        try:
            layers = tuple(Layer(str(item["operation_type"]), str(item["operation_parameter"]),
                                 int(item["num_operation_heads"]), int(item["feed_forward_dimension"]),
                                 int(item["num_feed_forward"]))
                           for item in overrides["nas_config"]["encoder_layers"])
            arch = Architecture(int(overrides["hidden_size"]), layers)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"not a FlexiBERT architecture ({type(exc).__name__}: {exc}): {overrides!r:.200}") \
                from None
        return self.validate(arch)

    def encode(self, arch: Architecture) -> np.ndarray:
        """The 38-number 0/1 encoding (see the module docstring), float64."""
        vector = np.zeros(self.encoding_length)
        vector[0] = self.hidden_sizes.index(arch.hidden_size)
        vector[1] = self.layer_counts.index(len(arch.layers))
        width = len(self.operations) + 3
        for k, layer in enumerate(arch.layers):
            base = 2 + k * width
            vector[base + self.operations.index((layer.operation_type, layer.operation_parameter))] = 1
            vector[base + len(self.operations)] = self.heads.index(layer.num_operation_heads)
            vector[base + len(self.operations) + 1] = self.ff_dimensions.index(layer.feed_forward_dimension)
            vector[base + len(self.operations) + 2] = self.ff_counts.index(layer.num_feed_forward)
        return vector

    def random(self, rng: np.random.Generator) -> Architecture:
        """An architecture drawn uniformly from the whole space (layer count weighted by its size)."""
        weights = np.array([self.choices_per_layer ** n for n in self.layer_counts], dtype=float)
        count = self.layer_counts[int(rng.choice(len(self.layer_counts), p=weights / weights.sum()))]
        return Architecture(self.hidden_sizes[int(rng.integers(len(self.hidden_sizes)))],
                            tuple(self._random_layer(rng) for _ in range(count)))

    def sample(self, rng: np.random.Generator) -> Architecture:
        return self.random(rng)

    def _random_layer(self, rng) -> Layer:
        op = self.operations[int(rng.integers(len(self.operations)))]
        return Layer(op[0], op[1], self.heads[int(rng.integers(len(self.heads)))],
                     self.ff_dimensions[int(rng.integers(len(self.ff_dimensions)))],
                     self.ff_counts[int(rng.integers(len(self.ff_counts)))])

    def mutate(self, arch: Architecture, rng: np.random.Generator) -> Architecture:
        """The natural neighbour: one choice changed, drawn uniformly among hidden size, layer count
        (new top layers drawn at random, or the top ones dropped), and one layer's operation, heads,
        feed-forward dimension or count (the new value differs from the old)."""
        def other(values, current):
            rest = [v for v in values if v != current]
            return rest[int(rng.integers(len(rest)))]

        moves = 2 + 4 * len(arch.layers)
        move = int(rng.integers(moves))
        if move == 0:
            return Architecture(other(self.hidden_sizes, arch.hidden_size), arch.layers)
        if move == 1:
            count = other(self.layer_counts, len(arch.layers))
            layers = arch.layers[:count] + tuple(self._random_layer(rng) for _ in range(count - len(arch.layers)))
            return Architecture(arch.hidden_size, layers)
        index, what = divmod(move - 2, 4)
        layer = arch.layers[index]
        if what == 0:
            op = other(self.operations, (layer.operation_type, layer.operation_parameter))
            new = Layer(op[0], op[1], *[getattr(layer, k) for k in LAYER_KEYS[2:]])
        elif what == 1:
            new = _replace(layer, num_operation_heads=other(self.heads, layer.num_operation_heads))
        elif what == 2:
            new = _replace(layer, feed_forward_dimension=other(self.ff_dimensions, layer.feed_forward_dimension))
        else:
            new = _replace(layer, num_feed_forward=other(self.ff_counts, layer.num_feed_forward))
        return Architecture(arch.hidden_size, arch.layers[:index] + (new,) + arch.layers[index + 1:])


    def neighbours(self, arch: Architecture) -> list[Architecture]:
        """Every architecture one choice away (as `mutate` draws them; a changed layer count keeps the
        lower layers and, when adding, repeats the top layer in the new slots)."""
        out = [Architecture(h, arch.layers) for h in self.hidden_sizes if h != arch.hidden_size]
        for count in self.layer_counts:
            if count != len(arch.layers):
                layers = arch.layers[:count] + (arch.layers[-1],) * (count - len(arch.layers))
                out.append(Architecture(arch.hidden_size, layers))
        for index, layer in enumerate(arch.layers):
            changed = [Layer(t, p, *[getattr(layer, k) for k in LAYER_KEYS[2:]]) for t, p in self.operations
                       if (t, p) != (layer.operation_type, layer.operation_parameter)]
            changed += [_replace(layer, num_operation_heads=v) for v in self.heads if v != layer.num_operation_heads]
            changed += [_replace(layer, feed_forward_dimension=v) for v in self.ff_dimensions
                        if v != layer.feed_forward_dimension]
            changed += [_replace(layer, num_feed_forward=v) for v in self.ff_counts if v != layer.num_feed_forward]
            out += [Architecture(arch.hidden_size, arch.layers[:index] + (new,) + arch.layers[index + 1:])
                    for new in changed]
        return out

    def distance(self, encodings: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """Hamming distance (entries that differ)."""
        return hamming(encodings, vector)

    def choices(self) -> list[Choice]:
        """hidden_size, num_encoder_layers, then per layer k: layer{k}_operation ("SA:SDP", ...),
        layer{k}_heads, layer{k}_ff_dimension, layer{k}_ff_count; layers above the smallest count are
        active only when num_encoder_layers reaches them."""
        out = [Choice("hidden_size", tuple(self.hidden_sizes)), Choice("num_encoder_layers", tuple(self.layer_counts))]
        for k in range(1, self.max_layers + 1):
            counts = tuple(n for n in self.layer_counts if n >= k)
            parent = ("num_encoder_layers", counts) if len(counts) < len(self.layer_counts) else (None, ())
            items = {"operation": tuple(f"{t}:{p}" for t, p in self.operations), "heads": tuple(self.heads),
                     "ff_dimension": tuple(self.ff_dimensions), "ff_count": tuple(self.ff_counts)}
            out += [Choice(f"layer{k}_{field}", values, *parent) for field, values in items.items()]
        return out

    def from_values(self, values: dict) -> Architecture:
        layers = []
        for k in range(1, int(values["num_encoder_layers"]) + 1):
            op_type, op_param = str(values[f"layer{k}_operation"]).split(":")
            layers.append(Layer(op_type, op_param, int(values[f"layer{k}_heads"]),
                                int(values[f"layer{k}_ff_dimension"]), int(values[f"layer{k}_ff_count"])))
        return self.validate(Architecture(int(values["hidden_size"]), tuple(layers)))

    def to_values(self, arch: Architecture) -> dict:
        return arch_values(arch)


def arch_values(arch: Architecture) -> dict:
    """{choice name: value} of the active choices of a FlexiBERT architecture."""
    values = {"hidden_size": arch.hidden_size, "num_encoder_layers": len(arch.layers)}
    for k, layer in enumerate(arch.layers, 1):
        values.update({f"layer{k}_operation": layer.operation, f"layer{k}_heads": layer.num_operation_heads,
                       f"layer{k}_ff_dimension": layer.feed_forward_dimension,
                       f"layer{k}_ff_count": layer.num_feed_forward})
    return values


def _replace(layer: Layer, **changes) -> Layer:
    from dataclasses import replace

    return replace(layer, **changes)


def hamming(encodings: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Hamming distance [n] of each row of `encodings` [n, d] to `vector` [d] (entries that differ)."""
    return (np.asarray(encodings) != np.asarray(vector)[None, :]).sum(axis=1)


def load_space(path) -> FlexiBertSpace:
    """The space from `BERT_search_space.json`; DataError if the file is missing or malformed."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
        layer = raw["encoder_layer"]
        operations = tuple((t, str(p)) for t in layer["operation_type"] for p in layer[t])
        space = FlexiBertSpace(tuple(int(h) for h in raw["hidden_size"]),
                               tuple(int(n) for n in raw["num_encoder_layers"]), operations,
                               tuple(int(h) for h in layer["num_operation_heads"]),
                               tuple(int(d) for d in layer["feed_forward_dimension"]),
                               tuple(int(c) for c in layer["num_feed_forward"]))
    except FileNotFoundError:
        raise DataError(f"FlexiBERT search space not found: {path}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"cannot read the FlexiBERT search space {path}: {type(exc).__name__}: {exc}") from None
    if any(len(values) < 2 for values in (space.hidden_sizes, space.layer_counts, space.heads,
                                          space.ff_dimensions, space.ff_counts)):
        raise DataError(f"{path}: every choice of the FlexiBERT space needs at least two values")
    return space
