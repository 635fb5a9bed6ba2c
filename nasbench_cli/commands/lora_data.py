"""`nasbench data info` and `nasbench query` on NMTLC's fine-tuning tables (`--benchmark lora-fr-en|lora-zh-en`)."""
import json

import click


def lora_summary(benchmark) -> dict:
    """Counts and facts of a lora table, the curves characterised (the `data info --benchmark lora-*` payload)."""
    import numpy as np

    from benchmarks.core.registry import get_spec
    from benchmarks.lora.table import bleu_curves, curve_lengths

    search = benchmark.search
    lengths = curve_lengths(search)                              # the table pads past them with the lowest
    ppl = search.val_loss
    best_at = np.nanargmin(ppl, axis=1) + 1                      # 1-based checkpoint of each curve's lowest (first)
    bleu = bleu_curves(search)
    best = benchmark.best_index

    def spread(values):
        return {"min": float(np.min(values)), "median": float(np.median(values)), "max": float(np.max(values))}

    return {
        "benchmark": benchmark.name, "configurations": search.n, "search_space_size": search.space.size,
        "choices": {k: list(v) for k, v in search.space.domains.items()},
        "fidelity": "checkpoints (dev perplexity at each); no time recorded: each checkpoint trained costs 1",
        "curve_length": spread(lengths), "lowest_at_checkpoint": spread(best_at),
        "lowest_at_last_checkpoint": int(np.sum(best_at == lengths)),
        "lowest_at_first_checkpoint": int(np.sum(best_at == 1)),
        "checkpoints_to_train_all": int(lengths.sum()),
        "best_perplexity": float(benchmark.l_star), "best_configuration": benchmark.best_id,
        "best_checkpoint": int(best_at[best]), "bleu_at_best": float(bleu[best, best_at[best] - 1]),
        "best_bleu": float(np.nanmax(bleu)),
        "default_budget_checkpoints": get_spec(benchmark.name).default_budget,
        "source": str(benchmark.source), "checksum_sha256": benchmark.checksum,
    }


def print_lora_summary(s: dict) -> None:
    click.echo(f"benchmark        {s['benchmark']} (NMTLC: LoRA fine-tuning of BLOOMZ and XGLM for translation)")
    click.echo(f"configurations   {s['configurations']} of a space of {s['search_space_size']}")
    click.echo("choices          " + "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in s["choices"].items()))
    click.echo(f"fidelity         {s['fidelity']}")
    c, b = s["curve_length"], s["lowest_at_checkpoint"]
    click.echo(f"curves           {c['min']:.0f}-{c['max']:.0f} checkpoints (median {c['median']:g}); the lowest "
               f"perplexity at checkpoint {b['min']:.0f}-{b['max']:.0f} (median {b['median']:g}), at the last in "
               f"{s['lowest_at_last_checkpoint']}, at the first in {s['lowest_at_first_checkpoint']}")
    click.echo(f"best             perplexity {s['best_perplexity']:.4f}: configuration {s['best_configuration']} at "
               f"checkpoint {s['best_checkpoint']} (BLEU there {s['bleu_at_best']:.2f}; best BLEU anywhere "
               f"{s['best_bleu']:.2f})")
    click.echo(f"whole table      {s['checkpoints_to_train_all']:,} checkpoints; default budget "
               f"{s['default_budget_checkpoints']:g} checkpoints (--budget-evals)")
    click.echo(f"source           {s['source']}")
    click.echo(f"sha256           {s['checksum_sha256']}")
    click.echo("cache            none: the file is read and checked at every load")


def lora_record(benchmark, row: int) -> dict:
    """One configuration: its curves and where its perplexity is lowest."""
    import numpy as np

    from benchmarks.lora.table import bleu_curves, curve_lengths

    search = benchmark.search
    length = int(curve_lengths(search)[row])
    ppl = search.val_loss[row, :length]
    at = int(np.argmin(ppl))
    return {"id": int(search.ids[row]), "benchmark": benchmark.name, "config": json.loads(search.recipes[row]),
            "checkpoints": length, "lowest_perplexity": float(ppl[at]), "at_checkpoint": at + 1,
            "regret": float(ppl[at] - benchmark.l_star), "bleu_there": float(bleu_curves(search)[row, at]),
            "perplexity_curve": ppl.tolist(), "bleu_curve": bleu_curves(search)[row, :length].tolist()}


def print_lora_record(r: dict) -> None:
    if "nearest" in r:
        n = r["nearest"]
        click.echo(f"not trained    not in the {r['benchmark']} table; the nearest is {n['id']}, at distance "
                   f"{n['distance']:g} (L1 on the encoding):")
    click.echo(f"configuration  {r['id']} ({r['benchmark']}): {json.dumps(r['config'])}")
    click.echo(f"curve          {r['checkpoints']} checkpoints; lowest dev perplexity {r['lowest_perplexity']:.4f} at "
               f"checkpoint {r['at_checkpoint']} (regret {r['regret']:.4f}), BLEU there {r['bleu_there']:.2f}")
    click.echo("perplexity     " + " ".join(f"{v:.3f}" for v in r["perplexity_curve"]))
    click.echo("BLEU           " + " ".join(f"{v:.2f}" for v in r["bleu_curve"]))
