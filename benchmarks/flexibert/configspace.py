"""The FlexiBERT space as a ConfigSpace (1.x) definition, for libraries (SMAC3, Optuna-by-hand, ...).

Hyperparameters: `hidden_size`, `num_encoder_layers`, and per layer k (1-based) `layer{k}_operation`
("SA:SDP", ..., "DSC:9"), `layer{k}_heads`, `layer{k}_ff_dimension`, `layer{k}_ff_count`, all
categorical. Layers above the smallest layer count are active only when `num_encoder_layers` reaches
them (an InCondition), so a configuration holds exactly its architecture's choices. Built from the
space's `choices()` by the generic `benchmarks.core.space.configuration_space`.
"""
from __future__ import annotations

from benchmarks.flexibert.space import Architecture, FlexiBertSpace, arch_values

LAYER_FIELDS = ("operation", "heads", "ff_dimension", "ff_count")


def configuration_space(space: FlexiBertSpace, seed: int = 0):
    """ConfigurationSpace of `space`, seeded with `seed`."""
    return space.configuration_space(seed)


def from_configuration(space: FlexiBertSpace, config) -> Architecture:
    """The architecture of a configuration (a ConfigSpace Configuration or a plain dict)."""
    return space.from_values(dict(config))


def to_configuration(arch: Architecture) -> dict:
    """The configuration dict of an architecture (active hyperparameters only)."""
    return arch_values(arch)
