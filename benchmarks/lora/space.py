"""NMTLC's fine-tuning space (Zhang & Duh, AMTA 2024): LoRA fine-tuning of a multilingual LLM for translation.

A configuration is the base model (BLOOMZ 560M, 1.7B or 3B; XGLM 564M, 1.7B or 2.9B), the LoRA rank (2,
16, 64), the batch size (16, 32, 64) and the learning rate (2e-5, 1e-4, 2e-4): 162 configurations. The
data names a base model by its family and the `model_size` (hidden width) and `num_layers` of its
`hyperparams`; `BASE_MODELS` maps them to the model's name.

Encoding (`encode`, 5 numbers in [0, 1]): the family (0 BLOOMZ, 1 XGLM), the model's size rank within
its family / 2, then the rank, batch size and learning rate as the index of their value / 2. Distance:
L1 on the encoding.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from benchmarks.core.space import FlatCategoricalSpace

# (family, model_size, num_layers) in the data -> the base model's name, in size order per family
BASE_MODELS = {("bloomz", 1024, 24): "bloomz-560m", ("bloomz", 2048, 24): "bloomz-1b7", ("bloomz", 2560, 30): "bloomz-3b",
               ("xglm", 1024, 24): "xglm-564m", ("xglm", 2048, 24): "xglm-1.7b", ("xglm", 2048, 48): "xglm-2.9b"}
MODELS = tuple(BASE_MODELS.values())
RANKS = (2, 16, 64)
BATCH_SIZES = (16, 32, 64)
LEARNING_RATES = (2e-5, 1e-4, 2e-4)
KEYS = ("base_model", "lora_rank", "batch_size", "learning_rate")


@dataclass(frozen=True)
class LoRAConfig:
    base_model: str
    lora_rank: int
    batch_size: int
    learning_rate: float

    def to_dict(self) -> dict:
        return {key: getattr(self, key) for key in KEYS}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class LoRASpace(FlatCategoricalSpace):
    """The 162 fine-tuning configurations of one corpus (`name`, e.g. 'lora-fr-en')."""
    name: str = "lora-fr-en"

    offers = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
    encoding_kind = "lora-encoding"
    config_type = LoRAConfig

    @property
    def domains(self) -> dict:
        return {"base_model": MODELS, "lora_rank": RANKS, "batch_size": BATCH_SIZES, "learning_rate": LEARNING_RATES}

    def validate(self, config: LoRAConfig) -> LoRAConfig:
        for key, values in self.domains.items():
            if getattr(config, key) not in values:
                raise UserError(f"{key} {getattr(config, key)!r} is not one of {', '.join(map(str, values))}")
        return config

    def parse(self, record) -> LoRAConfig:
        """A configuration from {base_model, lora_rank, batch_size, learning_rate}; UserError naming what is wrong."""
        if not isinstance(record, dict):
            raise UserError(f"a {self.name} configuration is a JSON object of {', '.join(KEYS)}, got {record!r:.100}")
        unknown = sorted(set(record) - set(KEYS))
        if unknown:
            raise UserError(f"unknown key {unknown[0]!r:.40} in a {self.name} configuration (keys: {', '.join(KEYS)})")
        missing = [key for key in KEYS if key not in record]
        if missing:
            raise UserError(f"a {self.name} configuration needs {missing[0]} (keys: {', '.join(KEYS)})")
        for key in ("lora_rank", "batch_size"):
            if isinstance(record[key], bool) or not isinstance(record[key], int):
                raise UserError(f"{key} must be an integer, got {record[key]!r:.40}")
        rate = record["learning_rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise UserError(f"learning_rate must be a number, got {rate!r:.40}")
        return self.validate(LoRAConfig(str(record["base_model"]), record["lora_rank"], record["batch_size"],
                                        float(rate)))

    def encode(self, config: LoRAConfig) -> np.ndarray:
        family, size = divmod(MODELS.index(config.base_model), 3)
        return np.array([family, size / 2, RANKS.index(config.lora_rank) / 2, BATCH_SIZES.index(config.batch_size) / 2,
                         LEARNING_RATES.index(config.learning_rate) / 2])
