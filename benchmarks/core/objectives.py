"""What a benchmark can be optimised for: objectives with a unit, a direction and a visibility.

Every benchmark lists its objectives in its catalog entry; the first is its loss objective (the one
the single-objective regret measures). An objective is either *known before training* (computable
from the architecture, as it would be in practice: parameters, FLOPs) and then visible to a searcher
for every architecture from the start, or *revealed by training* (losses, wall time) and then visible
only for what the searcher trained. The loss objective is per (architecture, epoch): validation for
the searcher, test for scoring; every other objective has one value per architecture.

Values here are in each objective's natural direction (GLUE points are maximised); `minimised`
turns them into the minimisation form fronts and hypervolumes use.
"""
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError


@dataclass(frozen=True)
class Objective:
    name: str
    unit: str
    maximise: bool
    known_before_training: bool
    description: str


OBJECTIVES = {
    "logppl": Objective("logppl", "log-perplexity", False, False,
                        "log-perplexity (validation for the searcher, test for scoring), per epoch"),
    "params": Objective("params", "parameters", False, True, "trainable parameters, as recorded in the logs"),
    "flops": Objective("flops", "FLOPs", False, True,
                       "cells: FLOPs per token of the three stacked cells' forward pass (benchmarks.cells.flops); "
                       "gpt: FLOPs of the forward pass of one 1,024-token sequence (benchmarks.gpt.sizes)"),
    "epoch_s": Objective("epoch_s", "seconds per epoch", False, False,
                         "mean recorded wall time per epoch over the architecture's log (revealed by its first "
                         "trained epoch)"),
    "glue": Objective("glue", "GLUE points", True, False, "GLUE average (its one recorded evaluation)"),
    "train_s": Objective("train_s", "seconds", False, False, "recorded time_to_train (revealed by the evaluation)"),
    "perplexity": Objective("perplexity", "perplexity", False, False,
                            "supernet perplexity on OpenWebText (HW-GPT-Bench; its one evaluation)"),
    "memory": Objective("memory", "bytes", False, True,
                        "gpt: fp16 weights plus the key/value cache of one 1,024-token sequence (benchmarks.gpt.sizes); "
                        "nmt: GPU memory used in training as Sockeye logged it, in MiB (unknown where not recorded)"),
    "bleu": Objective("bleu", "BLEU points", True, False, "dev-set BLEU of the trained system (NMTHPO; its one evaluation)"),
    "decode_s": Objective("decode_s", "seconds", False, False,
                          "measured GPU time to decode the dev set (Sockeye's translate 'Total time'; revealed by the "
                          "evaluation)"),
    "updates": Objective("updates", "training updates", False, False,
                         "training updates until convergence (early stopping; revealed by the evaluation)"),
    "ppl": Objective("ppl", "perplexity", False, False, "dev-set perplexity of the trained system (NMTHPO)"),
}
# what differs by benchmark family: (objective, family prefix) -> changed fields. nmt's memory was
# measured in training (MiB, revealed by the evaluation); gpt's is computed from the architecture (bytes).
FAMILY_OVERRIDES = {("memory", "nmt-"): {"unit": "MiB", "known_before_training": False}}


def objective_for(name: str, benchmark: str | None) -> Objective:
    """The objective `name` as `benchmark` defines it (its unit and visibility there)."""
    from dataclasses import replace

    objective = OBJECTIVES[name]
    for (overridden, prefix), changes in FAMILY_OVERRIDES.items():
        if overridden == name and benchmark is not None and benchmark.startswith(prefix):
            objective = replace(objective, **changes)
    return objective


def known_before_training(name: str, benchmark: str | None) -> bool:
    """Whether a searcher on `benchmark` sees objective `name` for every architecture from the start."""
    return objective_for(name, benchmark).known_before_training


def benchmark_objectives(benchmark: str) -> tuple:
    """The objective names `benchmark` offers, its loss objective first."""
    from benchmarks.core.registry import get_spec

    return get_spec(benchmark).objectives


def parse_objectives(text, benchmark: str) -> tuple:
    """'logppl,params' -> ('logppl', 'params'): two or three distinct objectives of `benchmark`, its
    loss objective among them; UserError (one line) otherwise."""
    offered = benchmark_objectives(benchmark)
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    for name in names:
        if name not in offered:
            from benchmarks.core.names import did_you_mean

            what = "unknown objective" if name not in OBJECTIVES else f"'{benchmark}' has no objective"
            raise UserError(f"{what} '{name}'; {benchmark} offers {', '.join(offered)}{did_you_mean(name, offered)}")
    if len(set(names)) != len(names):
        raise UserError(f"--objectives names an objective twice: {','.join(names)}")
    if not 2 <= len(names) <= 3:
        raise UserError(f"--objectives takes two or three objectives (got {len(names)}); one objective is "
                        "the default single-objective run")
    if offered[0] not in names:
        raise UserError(f"--objectives must include '{offered[0]}', the loss objective of '{benchmark}' "
                        "(what training is for)")
    return tuple(names)


def loss_objective(benchmark: str) -> str:
    return benchmark_objectives(benchmark)[0]


def architecture_values(search, name: str) -> np.ndarray:
    """float64 [n] of a per-architecture objective over the rows of the harness's table `search`, in its
    natural direction; NaN where the table has no value (a log with no epoch). Memoised per table."""
    key = (id(search), name)
    cached = _VALUES.get(key)
    if cached is not None and cached[0] is search:
        return cached[1]
    if name == "params":
        values = search.num_params.astype(np.float64)
    elif search.name.startswith("nmt-") and name in ("decode_s", "ppl", "updates", "memory"):
        from benchmarks.nmt.table import recorded

        values = np.array(recorded(search, name), dtype=np.float64)
    elif name in ("flops", "memory") and search.name.startswith("gpt-"):
        from benchmarks.gpt import sizes
        from benchmarks.gpt.table import supernet_config
        from benchmarks.core.space import architectures

        config, count = supernet_config(search), getattr(sizes, name)
        values = np.array([float(count(arch, config)) for arch in architectures(search)])
    elif name == "flops":
        from benchmarks.cells.flops import cell_flops

        values = np.array([cell_flops(r) for r in search.recipes], dtype=np.float64)
    elif name in ("epoch_s", "train_s"):
        times = np.where(np.isfinite(search.wall_time_s), search.wall_time_s, 0.0)
        logged = np.clip(search.n_epochs, 0, search.max_epochs)
        mask = np.arange(search.max_epochs)[None, :] < logged[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            values = (times * mask).sum(axis=1) / logged
        values[logged == 0] = np.nan
    else:
        raise UserError(f"'{name}' is not a per-architecture objective")
    from benchmarks.core.table import immutable

    values = immutable(values)              # shared by every trial in this process: nothing may change it
    _VALUES[key] = (search, values)
    return values


_VALUES: dict = {}


def minimised(name: str, values):
    """`values` of objective `name` in minimisation form (GLUE points negated)."""
    return -np.asarray(values, dtype=np.float64) if OBJECTIVES[name].maximise else np.asarray(values, dtype=np.float64)


def natural(name: str, values):
    """Inverse of `minimised`."""
    return minimised(name, values)
