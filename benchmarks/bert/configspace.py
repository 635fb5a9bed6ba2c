"""The FlexiBERT space as a ConfigSpace (1.x) definition, for libraries (SMAC3, Optuna-by-hand, ...).

Hyperparameters: `hidden_size`, `num_encoder_layers`, and per layer k (1-based) `layer{k}_operation`
("SA:SDP", ..., "DSC:9"), `layer{k}_heads`, `layer{k}_ff_dimension`, `layer{k}_ff_count`, all
categorical. Layers above the smallest layer count are active only when `num_encoder_layers` reaches
them (an InCondition), so a configuration holds exactly its architecture's choices.
"""
from __future__ import annotations

from benchmarks.bert.space import Architecture, FlexiBertSpace, Layer

LAYER_FIELDS = ("operation", "heads", "ff_dimension", "ff_count")


def configuration_space(space: FlexiBertSpace, seed: int = 0):
    """ConfigurationSpace of `space`, seeded with `seed`."""
    from ConfigSpace import Categorical, ConfigurationSpace, InCondition

    cs = ConfigurationSpace(seed=seed)
    layers = Categorical("num_encoder_layers", list(space.layer_counts))
    cs.add(Categorical("hidden_size", list(space.hidden_sizes)), layers)
    for k in range(1, space.max_layers + 1):
        items = {"operation": [f"{t}:{p}" for t, p in space.operations], "heads": list(space.heads),
                 "ff_dimension": list(space.ff_dimensions), "ff_count": list(space.ff_counts)}
        hps = [Categorical(f"layer{k}_{field}", items[field]) for field in LAYER_FIELDS]
        cs.add(*hps)
        counts = [n for n in space.layer_counts if n >= k]
        if len(counts) < len(space.layer_counts):
            cs.add(*[InCondition(hp, layers, counts) for hp in hps])
    return cs


def from_configuration(space: FlexiBertSpace, config) -> Architecture:
    """The architecture of a configuration (a ConfigSpace Configuration or a plain dict)."""
    values = dict(config)
    layers = []
    for k in range(1, int(values["num_encoder_layers"]) + 1):
        op_type, op_param = str(values[f"layer{k}_operation"]).split(":")
        layers.append(Layer(op_type, op_param, int(values[f"layer{k}_heads"]),
                            int(values[f"layer{k}_ff_dimension"]), int(values[f"layer{k}_ff_count"])))
    return space.validate(Architecture(int(values["hidden_size"]), tuple(layers)))


def to_configuration(arch: Architecture) -> dict:
    """The configuration dict of an architecture (active hyperparameters only)."""
    values = {"hidden_size": arch.hidden_size, "num_encoder_layers": len(arch.layers)}
    for k, layer in enumerate(arch.layers, 1):
        values.update({f"layer{k}_operation": layer.operation, f"layer{k}_heads": layer.num_operation_heads,
                       f"layer{k}_ff_dimension": layer.feed_forward_dimension,
                       f"layer{k}_ff_count": layer.num_feed_forward})
    return values
