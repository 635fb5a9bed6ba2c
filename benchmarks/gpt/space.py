"""HW-GPT-Bench's search spaces (Sukthanker et al., 2024): GPT-2-style decoders as architectures.

An architecture is an embedding width, a layer count, per layer a head count and an MLP ratio, and
whether the linear layers have biases. The data stores per-layer lists padded to the space's maximum
layer count (`sample_n_head`, `sample_mlp_ratio`); only the first `sample_n_layer` entries are used, so
the canonical form keeps exactly those (two records that differ only in their padding are one
architecture). `sample_layer_indices`, when present, must be 0..n_layer-1 (the layers used).

Encoding (`encode`, 3 + 2 * max_layers numbers in [0, 1]): embedding width, layer count and bias as
the index of their value over (number of values - 1), then per layer slot its heads and MLP ratio the
same way, or -1 for a slot above the layer count. Distance: L1 on the encoding (a changed per-layer
choice costs 0.5 or 1, a missing layer 1 to 2 per choice), which snapping uses.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.core.space import Choice, SearchSpace

ARCH_KEYS = ("sample_embed_dim", "sample_n_layer", "sample_layer_indices", "sample_n_head", "sample_mlp_ratio",
             "sample_bias")   # the data's `arch` object: nothing else is read, so nothing else is accepted


@dataclass(frozen=True)
class GPTArchitecture:
    embed_dim: int
    heads: tuple[int, ...]        # one per layer (len = n_layer)
    mlp_ratios: tuple[int, ...]   # one per layer
    bias: bool

    @property
    def n_layer(self) -> int:
        return len(self.heads)

    def to_dict(self) -> dict:
        """The data's `arch` object, unpadded (only the layers used)."""
        return {"sample_embed_dim": self.embed_dim, "sample_n_layer": self.n_layer,
                "sample_n_head": list(self.heads), "sample_mlp_ratio": list(self.mlp_ratios),
                "sample_bias": self.bias, "sample_layer_indices": list(range(self.n_layer))}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class GPTSpace(SearchSpace):
    """One of HW-GPT-Bench's spaces (choices from its evaluation config's `model` section)."""
    embed_choices: tuple[int, ...]
    layer_choices: tuple[int, ...]
    head_choices: tuple[int, ...]
    mlp_ratio_choices: tuple[int, ...]
    bias_choices: tuple[bool, ...] = (True, False)
    name: str = "gpt"

    offers = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
    encoding_kind = "gpt-encoding"

    @property
    def max_layers(self) -> int:
        return max(self.layer_choices)

    @property
    def size(self) -> int:
        per_layer = len(self.head_choices) * len(self.mlp_ratio_choices)
        return len(self.embed_choices) * len(self.bias_choices) * sum(per_layer ** n for n in self.layer_choices)

    def validate(self, arch: GPTArchitecture) -> GPTArchitecture:
        if arch.embed_dim not in self.embed_choices:
            raise UserError(f"sample_embed_dim {arch.embed_dim} is not one of {list(self.embed_choices)}")
        if arch.n_layer not in self.layer_choices:
            raise UserError(f"sample_n_layer {arch.n_layer} is not one of {list(self.layer_choices)}")
        if len(arch.mlp_ratios) != arch.n_layer:
            raise UserError("one MLP ratio per layer is needed")
        for k, (h, r) in enumerate(zip(arch.heads, arch.mlp_ratios)):
            if h not in self.head_choices:
                raise UserError(f"layer {k}: {h} heads is not one of {list(self.head_choices)}")
            if r not in self.mlp_ratio_choices:
                raise UserError(f"layer {k}: MLP ratio {r} is not one of {list(self.mlp_ratio_choices)}")
        if arch.bias not in self.bias_choices:
            raise UserError(f"sample_bias {arch.bias} is not one of {list(self.bias_choices)}")
        return arch

    def parse(self, record: dict) -> GPTArchitecture:
        """An architecture from the data's `arch` object (per-layer lists at least n_layer long, only
        the first n_layer entries used); UserError naming what is wrong."""
        if not isinstance(record, dict):
            raise UserError(f"a {self.name} architecture is a JSON object like the data's `arch`, got {record!r:.100}")
        unknown = sorted(set(record) - set(ARCH_KEYS))
        if unknown:
            raise UserError(f"unknown key {unknown[0]!r:.40} in a {self.name} architecture (keys: {', '.join(ARCH_KEYS)})")
        try:
            n_layer = record["sample_n_layer"]
            heads, ratios = record["sample_n_head"], record["sample_mlp_ratio"]
            embed, bias = record["sample_embed_dim"], record["sample_bias"]
        except KeyError as exc:
            raise UserError(f"a {self.name} architecture needs {exc.args[0]} (keys: sample_embed_dim, sample_n_layer, "
                            "sample_n_head, sample_mlp_ratio, sample_bias)") from None
        for key, value in (("sample_n_layer", n_layer), ("sample_embed_dim", embed)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{key} must be an integer, got {value!r:.50}")
        if not isinstance(bias, bool):
            raise UserError(f"sample_bias must be true or false, got {bias!r:.50}")
        for key, values in (("sample_n_head", heads), ("sample_mlp_ratio", ratios)):
            if not isinstance(values, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
                raise UserError(f"{key} must be a list of integers, got {values!r:.80}")
            if len(values) < n_layer:
                raise UserError(f"{key} has {len(values)} entries for {n_layer} layers")
        indices = record.get("sample_layer_indices")
        if indices is not None and indices != list(range(n_layer)):
            raise UserError(f"sample_layer_indices must be 0..{n_layer - 1} (the layers used), got {indices!r:.80}")
        return self.validate(GPTArchitecture(embed, tuple(heads[:n_layer]), tuple(ratios[:n_layer]), bias))

    # -- what algorithms use -----------------------------------------------------------------------
    @property
    def encoding_length(self) -> int:
        return 3 + 2 * self.max_layers

    def encode(self, arch: GPTArchitecture) -> np.ndarray:
        def scaled(values, value):
            return values.index(value) / max(1, len(values) - 1)

        vector = np.full(self.encoding_length, -1.0)
        vector[0] = scaled(self.embed_choices, arch.embed_dim)
        vector[1] = scaled(self.layer_choices, arch.n_layer)
        vector[2] = scaled(self.bias_choices, arch.bias)
        for k, (h, r) in enumerate(zip(arch.heads, arch.mlp_ratios)):
            vector[3 + 2 * k] = scaled(self.head_choices, h)
            vector[4 + 2 * k] = scaled(self.mlp_ratio_choices, r)
        return vector

    def sample(self, rng: np.random.Generator) -> GPTArchitecture:
        """Uniform over the choices: width, layer count, bias, then each layer's heads and ratio."""
        n = self.layer_choices[int(rng.integers(len(self.layer_choices)))]
        return GPTArchitecture(self.embed_choices[int(rng.integers(len(self.embed_choices)))],
                               tuple(self.head_choices[int(rng.integers(len(self.head_choices)))] for _ in range(n)),
                               tuple(self.mlp_ratio_choices[int(rng.integers(len(self.mlp_ratio_choices)))]
                                     for _ in range(n)),
                               self.bias_choices[int(rng.integers(len(self.bias_choices)))])

    def mutate(self, arch: GPTArchitecture, rng: np.random.Generator) -> GPTArchitecture:
        """One choice changed, drawn uniformly among width, layer count (new top layers drawn at random,
        or the top ones dropped), bias and one layer's heads or MLP ratio."""
        def other(values, current):
            rest = [v for v in values if v != current]
            return rest[int(rng.integers(len(rest)))]

        move = int(rng.integers(3 + 2 * arch.n_layer))
        if move == 0:
            return GPTArchitecture(other(self.embed_choices, arch.embed_dim), arch.heads, arch.mlp_ratios, arch.bias)
        if move == 1:
            n = other(self.layer_choices, arch.n_layer)
            extra = n - arch.n_layer
            heads = arch.heads[:n] + tuple(self.head_choices[int(rng.integers(len(self.head_choices)))]
                                           for _ in range(extra))
            ratios = arch.mlp_ratios[:n] + tuple(self.mlp_ratio_choices[int(rng.integers(len(self.mlp_ratio_choices)))]
                                                 for _ in range(extra))
            return GPTArchitecture(arch.embed_dim, heads, ratios, arch.bias)
        if move == 2:
            return GPTArchitecture(arch.embed_dim, arch.heads, arch.mlp_ratios, other(self.bias_choices, arch.bias))
        layer, what = divmod(move - 3, 2)
        if what == 0:
            heads = arch.heads[:layer] + (other(self.head_choices, arch.heads[layer]),) + arch.heads[layer + 1:]
            return GPTArchitecture(arch.embed_dim, heads, arch.mlp_ratios, arch.bias)
        ratios = arch.mlp_ratios[:layer] + (other(self.mlp_ratio_choices, arch.mlp_ratios[layer]),) + \
            arch.mlp_ratios[layer + 1:]
        return GPTArchitecture(arch.embed_dim, arch.heads, ratios, arch.bias)

    def neighbours(self, arch: GPTArchitecture) -> list:
        """Every architecture one choice away (a changed layer count repeats the top layer when adding)."""
        out = [GPTArchitecture(e, arch.heads, arch.mlp_ratios, arch.bias) for e in self.embed_choices
               if e != arch.embed_dim]
        for n in self.layer_choices:
            if n != arch.n_layer:
                extra = max(0, n - arch.n_layer)
                out.append(GPTArchitecture(arch.embed_dim, arch.heads[:n] + (arch.heads[-1],) * extra,
                                           arch.mlp_ratios[:n] + (arch.mlp_ratios[-1],) * extra, arch.bias))
        out += [GPTArchitecture(arch.embed_dim, arch.heads, arch.mlp_ratios, b) for b in self.bias_choices
                if b != arch.bias]
        for k in range(arch.n_layer):
            out += [GPTArchitecture(arch.embed_dim, arch.heads[:k] + (h,) + arch.heads[k + 1:], arch.mlp_ratios,
                                    arch.bias) for h in self.head_choices if h != arch.heads[k]]
            out += [GPTArchitecture(arch.embed_dim, arch.heads, arch.mlp_ratios[:k] + (r,) + arch.mlp_ratios[k + 1:],
                                    arch.bias) for r in self.mlp_ratio_choices if r != arch.mlp_ratios[k]]
        return out

    def choices(self) -> list[Choice]:
        """embed_dim, n_layer, bias, then layer{k}_heads and layer{k}_mlp_ratio for k = 1..max; the
        layers above the smallest count are active only when n_layer reaches them."""
        out = [Choice("embed_dim", tuple(self.embed_choices)), Choice("n_layer", tuple(self.layer_choices)),
               Choice("bias", tuple(self.bias_choices))]
        for k in range(1, self.max_layers + 1):
            counts = tuple(n for n in self.layer_choices if n >= k)
            parent = ("n_layer", counts) if len(counts) < len(self.layer_choices) else (None, ())
            out += [Choice(f"layer{k}_heads", tuple(self.head_choices), *parent),
                    Choice(f"layer{k}_mlp_ratio", tuple(self.mlp_ratio_choices), *parent)]
        return out

    def from_values(self, values: dict) -> GPTArchitecture:
        n = int(values["n_layer"])
        return self.validate(GPTArchitecture(int(values["embed_dim"]),
                                             tuple(int(values[f"layer{k}_heads"]) for k in range(1, n + 1)),
                                             tuple(int(values[f"layer{k}_mlp_ratio"]) for k in range(1, n + 1)),
                                             bool(values["bias"])))

    def to_values(self, arch: GPTArchitecture) -> dict:
        values = {"embed_dim": arch.embed_dim, "n_layer": arch.n_layer, "bias": arch.bias}
        for k, (h, r) in enumerate(zip(arch.heads, arch.mlp_ratios), 1):
            values[f"layer{k}_heads"], values[f"layer{k}_mlp_ratio"] = h, r
        return values
