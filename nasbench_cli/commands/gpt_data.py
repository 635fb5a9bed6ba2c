"""`nasbench data info` and `nasbench query` on HW-GPT-Bench's spaces (`--benchmark gpt-s|gpt-m|gpt-l`)."""
import json
from pathlib import Path

import click


def gpt_summary(benchmark) -> dict:
    """Counts and facts of a gpt table (the `data info --benchmark gpt-*` payload)."""
    import numpy as np

    from benchmarks.core.objectives import architecture_values
    from benchmarks.core.registry import get_spec
    from benchmarks.gpt.table import accuracies

    search = benchmark.search
    ppl = search.val_loss[:, 0]
    space = search.space

    def spread(values):
        return {"min": float(np.min(values)), "median": float(np.median(values)), "max": float(np.max(values))}

    return {
        "benchmark": benchmark.name, "architectures": search.n, "search_space_size": space.size,
        "choices": {"embed_dim": list(space.embed_choices), "n_layer": list(space.layer_choices),
                    "heads": list(space.head_choices), "mlp_ratio": list(space.mlp_ratio_choices),
                    "bias": list(space.bias_choices)},
        "fidelity": "single: one supernet evaluation per architecture; the clock counts evaluations",
        "best_perplexity": float(ppl.min()), "best_arch": benchmark.best_id,
        "perplexity": spread(ppl), "accuracy": spread(accuracies(search)),
        "params": spread(architecture_values(search, "params")), "flops": spread(architecture_values(search, "flops")),
        "memory_bytes": spread(architecture_values(search, "memory")),
        "default_budget_evaluations": get_spec(benchmark.name).default_budget,
        "data_dir": str(benchmark.data_dir), "source": str(benchmark.source), "cache": str(benchmark.cache_path),
        "checksum_sha256": benchmark.checksum,
    }


def print_gpt_summary(s: dict) -> None:
    c = s["choices"]
    click.echo(f"benchmark        {s['benchmark']} (HW-GPT-Bench: GPT-2-style decoders, supernet perplexity on OpenWebText)")
    click.echo(f"architectures    {s['architectures']:,} evaluated, of a space of {s['search_space_size']:.3g}")
    click.echo(f"choices          embed {c['embed_dim']}, layers {c['n_layer']}, heads {c['heads']} and MLP ratio "
               f"{c['mlp_ratio']} per layer, bias {c['bias']}")
    click.echo(f"fidelity         {s['fidelity']}")
    p = s["perplexity"]
    click.echo(f"perplexity       best {p['min']:.4f} (architecture {s['best_arch']}), median {p['median']:.4f}, "
               f"worst {p['max']:.4f}")
    for key, unit in (("params", "parameters"), ("flops", "FLOPs per 1,024-token forward pass"),
                      ("memory_bytes", "bytes (fp16 weights + KV cache of 1,024 tokens)")):
        v = s[key]
        click.echo(f"{key:<16} {v['min']:.4g} - {v['max']:.4g} {unit} (median {v['median']:.4g})")
    click.echo(f"default budget   {s['default_budget_evaluations']:g} evaluations (--budget-evals)")
    click.echo(f"source           {s['source']}")
    click.echo(f"sha256           {s['checksum_sha256']}")
    click.echo(f"cache            {s['cache']}")


def gpt_record(benchmark, row: int) -> dict:
    """Everything about one row: architecture, perplexity, accuracy, parameters, FLOPs, memory."""
    import json as json_

    from benchmarks.core.objectives import architecture_values
    from benchmarks.gpt.table import accuracies

    search = benchmark.search
    return {"id": int(search.ids[row]), "benchmark": benchmark.name,
            "arch": json_.loads(search.recipes[row]),
            "perplexity": float(search.val_loss[row, 0]), "accuracy": float(accuracies(search)[row]),
            "regret": float(search.val_loss[row, 0] - benchmark.l_star),
            "params": int(architecture_values(search, "params")[row]),
            "flops": int(architecture_values(search, "flops")[row]),
            "memory_bytes": int(architecture_values(search, "memory")[row])}


def print_gpt_record(r: dict) -> None:
    if "nearest" in r:
        n = r["nearest"]
        click.echo(f"not evaluated  the architecture is in the {r['benchmark']} space but not in its table; the nearest "
                   f"evaluated one is {n['id']}, at distance {n['distance']:g} (L1 on the space's encoding):")
    click.echo(f"architecture   {r['id']} ({r['benchmark']})")
    click.echo(f"perplexity     {r['perplexity']:.4f} (regret {r['regret']:.4f} against the table's best), "
               f"accuracy {r['accuracy']:.4f}")
    click.echo(f"size           {r['params']:,} parameters, {r['flops']:.4g} FLOPs per 1,024-token forward pass, "
               f"{r['memory_bytes'] / 2**20:.1f} MiB (fp16 weights + KV cache)")
    click.echo("arch           " + json.dumps(r["arch"]))


def find_gpt(benchmark, text: str) -> tuple[int, dict | None]:
    """(row, None) of an evaluated architecture given as the data's `arch` object (JSON or a file), or
    (nearest row, {id, distance}) of one the table does not have; UserError if it is not in the space."""
    import numpy as np

    from benchmarks.core.errors import UserError
    from benchmarks.core.space import architectures, encodings

    source = Path(text)
    try:
        raw = source.read_text(encoding="utf-8") if not text.lstrip().startswith("{") and source.is_file() else text
        obj = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        raise UserError("--recipe must be a JSON object (or a file holding one) like the data's `arch`") from None
    search = benchmark.search
    arch = search.space.parse(obj.get("arch", obj) if isinstance(obj, dict) else obj)
    rows = {a: k for k, a in enumerate(architectures(search))}
    if arch in rows:
        return rows[arch], None
    distance = search.space.distance(encodings(search), search.space.encode(arch))
    row = int(np.argmin(distance))
    return row, {"id": int(search.ids[row]), "distance": float(distance[row]), "arch": arch.to_dict()}
