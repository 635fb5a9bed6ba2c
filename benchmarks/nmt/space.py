"""NMTHPO's search space (Zhang & Duh, TACL 2020): six hyperparameters of a Sockeye Transformer.

A configuration is the BPE vocabulary size (symbols), the number of layers, the embedding width, the
feed-forward width, the attention heads and the initial learning rate; every choice is categorical. The
pairs share the space except for BPE and layers: so-en and sw-en (low-resource) use 1k-32k BPE symbols,
so-en 1/2/4 layers and sw-en 1/2/4/6, the other four pairs 10k/30k/50k symbols and 2/4 layers.

Encoding (`encode`, 6 numbers in [0, 1]): the upstream scaling of `.hyps_scaled` (the upstream README's
table of scaling functions): bpe (x - 10k) / 40k, or log2(x / 1000) / 5 on so-en and sw-en; layers
(x - 2) / 2, (x - 1) / 3 on so-en, (x - 1) / 5 on sw-en; embedding (log2 x - 8) / 2; feed-forward
(x - 1024) / 1024; heads (x - 8) / 8; learning rate (x - 3e-4) / 7e-4. Distance: L1 on the encoding.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.core.space import FlatCategoricalSpace

HYPERPARAMETERS = ("bpe_symbols", "num_layers", "num_embed", "transformer_feed_forward_num_hidden",
                   "transformer_attention_heads", "initial_learning_rate")   # the `.hyps` columns, in order
SHARED_CHOICES = {"num_embed": (256, 512, 1024), "transformer_feed_forward_num_hidden": (1024, 2048),
                  "transformer_attention_heads": (8, 16), "initial_learning_rate": (3e-4, 6e-4, 1e-3)}
LOW_RESOURCE_BPE = (1000, 2000, 4000, 8000, 16000, 32000)
PAIR_CHOICES = {      # pair -> (bpe symbols, layers)
    "en-ja": ((10000, 30000, 50000), (2, 4)), "ja-en": ((10000, 30000, 50000), (2, 4)),
    "ru-en": ((10000, 30000, 50000), (2, 4)), "zh-en": ((10000, 30000, 50000), (2, 4)),
    "so-en": (LOW_RESOURCE_BPE, (1, 2, 4)), "sw-en": (LOW_RESOURCE_BPE, (1, 2, 4, 6)),
}


@dataclass(frozen=True)
class NMTConfig:
    """One Transformer configuration; `to_dict` uses the `.hyps` column names."""
    bpe_symbols: int
    num_layers: int
    num_embed: int
    transformer_feed_forward_num_hidden: int
    transformer_attention_heads: int
    initial_learning_rate: float

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in HYPERPARAMETERS}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class NMTSpace(FlatCategoricalSpace):
    """The configurations of one language pair (`pair`, e.g. 'zh-en')."""
    pair: str = "zh-en"
    name: str = "nmt-zh-en"

    offers = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
    encoding_kind = "nmt-encoding"
    config_type = NMTConfig

    def __post_init__(self):
        if self.pair not in PAIR_CHOICES:
            raise UserError(f"unknown NMTHPO language pair '{self.pair}'; one of {', '.join(PAIR_CHOICES)}")

    @property
    def domains(self) -> dict:
        """{hyperparameter: its values, in order} for this pair."""
        bpe, layers = PAIR_CHOICES[self.pair]
        return {"bpe_symbols": bpe, "num_layers": layers, **SHARED_CHOICES}

    def validate(self, config: NMTConfig) -> NMTConfig:
        for name, values in self.domains.items():
            if getattr(config, name) not in values:
                raise UserError(f"{name} {getattr(config, name)!r} is not one of {self.pair}'s "
                                f"{', '.join(f'{v:g}' for v in values)}")
        return config

    def parse(self, record) -> NMTConfig:
        """A configuration from {hyperparameter: value} (the `.hyps` names); UserError naming what is wrong."""
        if not isinstance(record, dict):
            raise UserError(f"an {self.name} configuration is a JSON object of {', '.join(HYPERPARAMETERS)}, "
                            f"got {record!r:.100}")
        unknown = sorted(set(record) - set(HYPERPARAMETERS))
        if unknown:
            raise UserError(f"unknown key {unknown[0]!r:.40} in an {self.name} configuration "
                            f"(keys: {', '.join(HYPERPARAMETERS)})")
        missing = [name for name in HYPERPARAMETERS if name not in record]
        if missing:
            raise UserError(f"an {self.name} configuration needs {missing[0]} (keys: {', '.join(HYPERPARAMETERS)})")
        values = {}
        for name in HYPERPARAMETERS:
            value = record[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UserError(f"{name} must be a number, got {value!r:.40}")
            values[name] = float(value) if name == "initial_learning_rate" else value
            if name != "initial_learning_rate":
                if value != int(value):
                    raise UserError(f"{name} must be a whole number, got {value!r:.40}")
                values[name] = int(value)
        return self.validate(NMTConfig(**values))

    # -- what algorithms use -----------------------------------------------------------------------
    def encode(self, config: NMTConfig) -> np.ndarray:
        """The upstream `.hyps_scaled` scaling (module docstring)."""
        low_resource = self.pair in ("so-en", "sw-en")
        bpe = math.log2(config.bpe_symbols / 1000) / 5 if low_resource else (config.bpe_symbols - 10000) / 40000
        layers = {"so-en": (config.num_layers - 1) / 3, "sw-en": (config.num_layers - 1) / 5}.get(
            self.pair, (config.num_layers - 2) / 2)
        return np.array([bpe, layers, (math.log2(config.num_embed) - 8) / 2,
                         (config.transformer_feed_forward_num_hidden - 1024) / 1024,
                         (config.transformer_attention_heads - 8) / 8,
                         (config.initial_learning_rate - 3e-4) / 7e-4])
