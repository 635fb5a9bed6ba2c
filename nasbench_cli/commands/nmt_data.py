"""`nasbench data info` and `nasbench query` on NMTHPO's translation tables (`--benchmark nmt-<pair>`)."""
import json

import click

COLUMNS = (("decode_s", "seconds to decode the dev set on one GPU"), ("memory", "MiB of GPU memory in training"),
           ("params", "parameters"), ("updates", "training updates to convergence"), ("ppl", "dev perplexity"))


def nmt_summary(benchmark) -> dict:
    """Counts and facts of an nmt table (the `data info --benchmark nmt-*` payload)."""
    import numpy as np

    from benchmarks.core.objectives import architecture_values
    from benchmarks.core.registry import get_spec
    from benchmarks.nmt.table import recorded

    search = benchmark.search
    bleu = -search.val_loss[:, 0]

    def spread(values):
        values = values[np.isfinite(values)]
        return {"min": float(np.min(values)), "median": float(np.median(values)), "max": float(np.max(values))}

    memory = architecture_values(search, "memory")
    return {
        "benchmark": benchmark.name, "systems": search.n, "search_space_size": search.space.size,
        "choices": {name: list(values) for name, values in search.space.domains.items()},
        "fidelity": "single: one trained system per configuration; the clock counts " + (
            "training updates (each evaluation costs its system's updates)" if get_spec(benchmark.name).clock == "updates"
            else "evaluations"),
        "best_bleu": float(bleu.max()), "best_system": benchmark.best_id, "bleu": spread(bleu),
        **{name: spread(architecture_values(search, name)) for name, _ in COLUMNS},
        "memory_not_recorded": int(np.sum(~np.isfinite(memory))),
        "published_front": [int(i) for i in search.ids[np.flatnonzero(recorded(search, "published_front"))]],
        "default_budget_evaluations": get_spec(benchmark.name).default_budget,
        "data_dir": str(benchmark.data_dir), "checksum_sha256": benchmark.checksum,
    }


def print_nmt_summary(s: dict) -> None:
    click.echo(f"benchmark        {s['benchmark']} (NMTHPO: Transformer translation systems trained from scratch, "
               "dev BLEU)")
    click.echo(f"systems          {s['systems']:,} trained, of a space of {s['search_space_size']:,} configurations")
    click.echo("choices          " + "; ".join(f"{k} {', '.join(f'{v:g}' for v in vs)}" for k, vs in s["choices"].items()))
    click.echo(f"fidelity         {s['fidelity']}")
    b = s["bleu"]
    click.echo(f"dev BLEU         best {b['max']:.2f} (system {s['best_system']}), median {b['median']:.2f}, "
               f"worst {b['min']:.2f}")
    for key, unit in COLUMNS:
        v = s[key]
        click.echo(f"{key:<16} {v['min']:.4g} - {v['max']:.4g} {unit} (median {v['median']:.4g})")
    if s["memory_not_recorded"]:
        click.echo(f"                 memory not recorded for {s['memory_not_recorded']} systems (unknown: outside "
                   "every front and constraint on memory)")
    click.echo(f"published front  {len(s['published_front'])} systems (BLEU up, decode_s down): "
               + ", ".join(map(str, s["published_front"])))
    click.echo(f"default budget   {s['default_budget_evaluations']:g} evaluations (--budget-evals)")
    click.echo(f"data             {s['data_dir']}")
    click.echo(f"sha256           {s['checksum_sha256']}")
    click.echo("cache            none: the four files are read and checked at every load")


def nmt_record(benchmark, row: int) -> dict:
    """Everything about one system: its configuration and every recorded number."""
    import math

    from benchmarks.core.objectives import architecture_values
    from benchmarks.nmt.table import recorded

    search = benchmark.search
    memory = float(architecture_values(search, "memory")[row])
    return {"id": int(search.ids[row]), "benchmark": benchmark.name, "config": json.loads(search.recipes[row]),
            "bleu": float(-search.val_loss[row, 0]), "regret": float(search.val_loss[row, 0] - benchmark.l_star),
            "decode_s": float(recorded(search, "decode_s")[row]), "memory_mib": None if math.isnan(memory) else memory,
            "params": int(search.num_params[row]), "updates": int(recorded(search, "updates")[row]),
            "ppl": float(recorded(search, "ppl")[row]),
            "on_published_front": bool(recorded(search, "published_front")[row])}


def print_nmt_record(r: dict) -> None:
    if "nearest" in r:
        n = r["nearest"]
        click.echo(f"not trained    the configuration is in the {r['benchmark']} space but not in its table; the nearest "
                   f"trained one is {n['id']}, at distance {n['distance']:g} (L1 on the scaled hyperparameters):")
    click.echo(f"system         {r['id']} ({r['benchmark']}){', on the published front' if r['on_published_front'] else ''}")
    click.echo(f"dev BLEU       {r['bleu']:.2f} (regret {r['regret']:.2f} against the table's best), dev perplexity "
               f"{r['ppl']:.4g}")
    memory = "not recorded" if r["memory_mib"] is None else f"{r['memory_mib']:.0f} MiB"
    click.echo(f"cost           decode {r['decode_s']:.1f} s, GPU memory {memory}, {r['params']:,} parameters, "
               f"{r['updates']:,} updates")
    click.echo("config         " + json.dumps(r["config"]))
