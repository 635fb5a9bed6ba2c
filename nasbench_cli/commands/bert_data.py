"""`nasbench data info` and `nasbench query` on NAS-Bench-BERT (`--benchmark bert`)."""
import json
from pathlib import Path

import click


def bert_summary(benchmark) -> dict:
    """Counts and facts of the bert table (the `data info --benchmark bert` payload)."""
    import numpy as np

    from benchmarks.flexibert.table import architectures
    from benchmarks.core.registry import get_spec

    search = benchmark.search
    glue = -search.val_loss[:, 0]
    seconds = search.wall_time_s[:, 0]
    archs = architectures(search)
    groups: dict = {}
    for rid, arch in zip(search.ids.tolist(), archs):
        groups.setdefault(arch, []).append(rid)
    return {
        "benchmark": "bert",
        "architectures": search.n,
        "distinct_configurations": len(groups),
        "repeated_configurations": sorted(ids for ids in groups.values() if len(ids) > 1),
        "search_space_size": search.space.size,
        "fidelity": "single: one evaluation per architecture, costing its time_to_train",
        "best_glue": float(glue.max()), "best_arch": benchmark.best_id,
        "median_glue": float(np.median(glue)), "worst_glue": float(glue.min()),
        "time_to_train_s": {"mean": float(seconds.mean()), "median": float(np.median(seconds)),
                            "min": float(seconds.min()), "max": float(seconds.max()),
                            "total_hours": float(seconds.sum() / 3600)},
        "default_budget": get_spec("bert").default_budget,
        "data_dir": str(benchmark.data_dir), "source": str(benchmark.source),
        "checksum_sha256": benchmark.checksum,
    }


def print_bert_summary(s: dict) -> None:
    t = s["time_to_train_s"]
    click.echo("benchmark        bert (NAS-Bench-BERT: FlexiBERT transformers, GLUE)")
    click.echo(f"architectures    {s['architectures']} evaluated, {s['distinct_configurations']} distinct configurations "
               f"of a space of {s['search_space_size']:,}")
    click.echo(f"repeated         {len(s['repeated_configurations'])} configurations trained twice: "
               + ", ".join("/".join(map(str, ids)) for ids in s["repeated_configurations"]))
    click.echo(f"fidelity         {s['fidelity']}")
    click.echo(f"GLUE average     best {s['best_glue']:.4f} (architecture {s['best_arch']}), median "
               f"{s['median_glue']:.4f}, worst {s['worst_glue']:.4f} points")
    click.echo(f"time_to_train    mean {t['mean']:.0f} s, median {t['median']:.0f} s, {t['min']:.0f}-{t['max']:.0f} s; "
               f"all 500: {t['total_hours']:.1f} h")
    click.echo(f"default budget   {s['default_budget']:g} h (about 50 evaluations of mean cost)")
    click.echo(f"source           {s['source']}")
    click.echo(f"sha256           {s['checksum_sha256']}")


def bert_record(benchmark, row: int) -> dict:
    """Everything published about one row: architecture, configuration, scores, cost, parameters."""
    from benchmarks.flexibert.configspace import to_configuration
    from benchmarks.flexibert.table import architectures, same_configuration, task_scores

    search = benchmark.search
    arch = architectures(search)[row]
    scores = task_scores(benchmark)[row]
    return {"id": int(search.ids[row]), "glue": float(scores["glue"]),
            "scores": {k: float(v) for k, v in scores.items() if k != "glue"},
            "regret_glue_points": float(-benchmark.l_star - scores["glue"]),
            "time_to_train_s": float(search.wall_time_s[row, 0]), "num_params": int(search.num_params[row]),
            "architecture": arch.to_dict(), "configuration": to_configuration(arch),
            "same_configuration_ids": same_configuration(benchmark, row)}


def print_bert_record(r: dict) -> None:
    click.echo(f"architecture   {r['id']} (bert), {r['num_params']:,} parameters, trained in "
               f"{r['time_to_train_s']:.0f} s ({r['time_to_train_s'] / 3600:.2f} h)")
    click.echo(f"GLUE average   {r['glue']:.4f} points (regret {r['regret_glue_points']:.4f} against the best of the 500)")
    click.echo("tasks          " + "  ".join(f"{k} {v:.2f}" for k, v in r["scores"].items()))
    if len(r["same_configuration_ids"]) > 1:
        click.echo("same config    trained as ids " + ", ".join(map(str, r["same_configuration_ids"])))
    click.echo("configuration  " + json.dumps(r["configuration"]))


def find_architecture(benchmark, text: str) -> tuple[int | None, dict]:
    """(row of an evaluated architecture equal to the one in `text`, or None; facts of the lookup).
    `text`: JSON (or a JSON file) in the `model_hparam_overrides` form or as a configuration dict;
    UserError if it is not a FlexiBERT architecture."""
    from benchmarks.flexibert.configspace import from_configuration
    from benchmarks.flexibert.table import rows_of
    from benchmarks.core.errors import UserError

    try:
        raw = json.loads(text if text.lstrip().startswith("{") else Path(text).read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"--recipe is neither a JSON architecture nor a readable JSON file: {exc}") from None
    if not isinstance(raw, dict):
        raise UserError("--recipe must be a JSON object (model_hparam_overrides or a configuration)")
    space = benchmark.search.space
    try:
        arch = space.parse(raw) if "nas_config" in raw else from_configuration(space, raw)
    except (KeyError, ValueError, TypeError) as exc:
        raise UserError(f"--recipe is not a FlexiBERT configuration: missing or bad {exc}") from None
    rows = rows_of(benchmark.search, arch)
    if rows:
        return rows[0], {}
    from benchmarks.flexibert.space import hamming
    from benchmarks.core.space import encodings

    distance = hamming(encodings(benchmark.search), space.encode(arch))
    nearest = int(distance.argmin())
    return None, {"nearest_id": int(benchmark.search.ids[nearest]), "hamming_distance": int(distance[nearest])}
