"""`nasbench query`: the recorded metrics of one architecture, by id or by its cell."""
import click

from nasbench_cli.commands.options import benchmark_option, data_dir_option, echo_json, json_option


def architecture_record(benchmark, row: int, epochs: int | None) -> dict:
    """Recorded metrics of row `row` at `epochs` (default: its last recorded epoch)."""
    import math

    import numpy as np

    from benchmarks.core.errors import UserError

    search = benchmark.search
    logged = int(search.n_epochs[row])
    if epochs is not None and not 1 <= epochs <= search.max_epochs:
        raise UserError(f"--epochs must be in 1..{search.max_epochs}, got {epochs}")
    record = {"recepie_id": int(search.ids[row]), "status": str(search.status[row]),
              "epochs_recorded": logged, "num_params": int(search.num_params[row]),
              "recipe": search.recipe(row), "epochs": epochs if epochs is not None else logged}
    if logged == 0:                 # 65 PTB logs end before their first epoch
        record["note"] = f"no epoch recorded (status {record['status']})"
        return record
    epochs = record["epochs"]
    if epochs > logged:
        record["note"] = f"the log stops after {logged} epoch(s) (status {record['status']})"
        return record

    def at(values):
        value = float(values[row, epochs - 1])
        return value if math.isfinite(value) else None

    def ppl(logppl):
        return None if logppl is None or logppl > 700 else math.exp(logppl)

    val, test, train = at(search.val_loss), at(benchmark.test_loss), at(search.train_loss)
    record.update({
        "train_logppl": train, "val_logppl": val, "test_logppl": test,
        "train_perplexity": ppl(train), "val_perplexity": ppl(val), "test_perplexity": ppl(test),
        "wall_time_s": float(np.nansum(search.wall_time_s[row, :epochs])),
    })
    for name, values in (("val", search.val_loss), ("test", benchmark.test_loss)):
        finite = np.where(np.isfinite(values[row, :logged]), values[row, :logged], np.inf)
        if logged and np.isfinite(finite.min()):
            best = int(np.argmin(finite))
            record[f"best_{name}_epoch"] = best + 1
            record[f"best_{name}_logppl"] = float(finite[best])
            record[f"best_{name}_perplexity"] = ppl(float(finite[best]))
    return record


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def print_record(record: dict, benchmark) -> None:
    r = record
    click.echo(f"architecture   {r['recepie_id']} ({benchmark.name}), status {r['status']}, "
               f"{r['epochs_recorded']} epochs recorded, {r['num_params']:,} parameters")
    if "note" in r:
        click.echo(f"epoch {r['epochs']}       {r['note']}")
    else:
        click.echo(f"at epoch {r['epochs']:<5} train {_fmt(r['train_logppl'], '.4f')}  val {_fmt(r['val_logppl'], '.4f')}  "
                   f"test {_fmt(r['test_logppl'], '.4f')} log-perplexity")
        click.echo(f"{'':15}train {_fmt(r['train_perplexity'], '.1f')}  val {_fmt(r['val_perplexity'], '.1f')}  "
                   f"test {_fmt(r['test_perplexity'], '.1f')} perplexity")
        click.echo(f"wall time      {r['wall_time_s']:.0f} s ({r['wall_time_s'] / 3600:.2f} h) to train {r['epochs']} epochs")
        for name in ("val", "test"):
            if f"best_{name}_epoch" in r:
                click.echo(f"best {name:<9} epoch {r[f'best_{name}_epoch']}: {r[f'best_{name}_logppl']:.4f} "
                           f"log-perplexity (perplexity {_fmt(r[f'best_{name}_perplexity'], '.1f')})")
    import json

    if len(r.get("same_cell_ids", ())) > 1:
        click.echo(f"same cell      trained {len(r['same_cell_ids'])} times in the benchmark, as ids "
                   + ", ".join(map(str, r["same_cell_ids"])))
    click.echo("recipe         " + json.dumps(r["recipe"]))


@click.command()
@benchmark_option
@click.option("--arch", "arch_id", type=int, default=None, help="recepie_id of the architecture (bert: its id).")
@click.option("--recipe", "recipe_text", default=None,
              help="A cell as a JSON string or a JSON file: found through its canonical hash, whatever its node "
                   "names (bert: an architecture as model_hparam_overrides or a configuration dict).")
@click.option("--epochs", type=int, default=None, help="Epoch to report (1..50; default: the last recorded).")
@click.option("--front", is_flag=True,
              help="Instead of one architecture: the benchmark's true Pareto front for --objectives (each "
                   "architecture at its best test value over epochs), within any --constraint.")
@click.option("--objectives", "objectives_text", default=None, metavar="A,B[,C]",
              help="With --front: the objectives (default: the loss and params, e.g. logppl,params).")
@click.option("--constraint", "constraint_texts", multiple=True, metavar="OBJ<=X",
              help="With --front: only architectures within this budget (repeatable).")
@data_dir_option
@json_option
def query(benchmark_name, arch_id, recipe_text, epochs, front, objectives_text, constraint_texts, data_dir, as_json):
    """Recorded metrics of one architecture at an epoch: train/val/test log-perplexity and perplexity,
    wall time to reach it, parameters, status and the recipe; or with --front the benchmark's true
    Pareto front.

    Exit 1 if a valid --recipe is not in the benchmark; exit 2 if it is invalid.
    """
    from benchmarks.core.errors import UserError
    from benchmarks.core.registry import load_benchmark

    if front:
        if arch_id is not None or recipe_text is not None or epochs is not None:
            raise UserError("--front lists the benchmark's front: leave out --arch, --recipe and --epochs")
        return _query_front(load_benchmark(benchmark_name, data_dir), objectives_text, constraint_texts, as_json)
    if objectives_text or constraint_texts:
        raise UserError("--objectives and --constraint go with --front")
    if (arch_id is None) == (recipe_text is None):
        raise UserError("give exactly one of --arch ID or --recipe FILE_OR_JSON (or --front)")
    benchmark = load_benchmark(benchmark_name, data_dir)
    if benchmark_name == "bert":
        return _query_bert(benchmark, arch_id, recipe_text, epochs, as_json)
    if benchmark_name.startswith(("gpt-", "nmt-", "lora-")):
        return _query_gpt(benchmark, arch_id, recipe_text, epochs, as_json)
    if recipe_text is not None:
        from benchmarks.cells.canonical import lookup_all, lookup_recipe

        cell, found = lookup_recipe(benchmark, recipe_text)
        if found is None:
            message = f"the cell is valid but not in benchmark '{benchmark.name}'"
            if as_json:
                echo_json({"found": False, "benchmark": benchmark.name, "message": message})
            else:
                click.echo(message, err=True)
            raise click.exceptions.Exit(1)
        arch_id = found
    record = architecture_record(benchmark, benchmark.search.index_of(arch_id), epochs)
    if recipe_text is not None:
        record["same_cell_ids"] = list(lookup_all(benchmark, cell))
    if as_json:
        echo_json(record)
    else:
        print_record(record, benchmark)


def front_rows(benchmark, objectives, constraints) -> dict:
    """The true front as JSON-ready rows (natural units), sorted by the loss objective."""
    from benchmarks.core.objectives import natural, objective_for
    from benchmarks.core.pareto import objective_space

    space = objective_space(benchmark, objectives, constraints)
    order = sorted(range(len(space.front_rows)), key=lambda k: (space.front_points[k, space.loss_column],
                                                                 int(space.front_rows[k])))
    rows = []
    for k in order:
        row = {"recepie_id": int(benchmark.search.ids[space.front_rows[k]]), "epoch": int(space.front_epochs[k])}
        for col, name in enumerate(objectives):
            row[name] = float(natural(name, space.front_points[k, col]))
        rows.append(row)
    return {"benchmark": benchmark.name, "objectives": list(objectives),
            "units": {name: objective_for(name, benchmark.name).unit for name in objectives},
            "constraints": [str(c) for c in constraints], "hv_space": space.record_fields(), "front": rows}


def _query_front(benchmark, objectives_text, constraint_texts, as_json):
    from benchmarks.core.objectives import loss_objective
    from benchmarks.core.problem import scoring_problem

    loss = loss_objective(benchmark.name)
    objectives, constraints = scoring_problem(benchmark.name, objectives_text or f"{loss},params", constraint_texts)
    result = front_rows(benchmark, objectives or (loss,), constraints)
    if as_json:
        return echo_json(result)
    within = f" within {' and '.join(result['constraints'])}" if constraints else ""
    click.echo(f"{benchmark.name}: true Pareto front on {','.join(result['objectives'])}{within}: "
               f"{len(result['front'])} architectures (each at its best test epoch)")
    names = result["objectives"]
    click.echo(f"{'id':>9} {'epoch':>5} " + " ".join(f"{n + ' (' + result['units'][n] + ')':>26}" for n in names))
    for row in result["front"]:
        click.echo(f"{row['recepie_id']:>9} {row['epoch']:>5} " + " ".join(f"{row[n]:>26.6g}" for n in names))


def _query_gpt(benchmark, arch_id, recipe_text, epochs, as_json):
    from benchmarks.core.errors import UserError
    from nasbench_cli.commands.gpt_data import find_gpt, gpt_record, print_gpt_record
    from nasbench_cli.commands.nmt_data import nmt_record, print_nmt_record

    from nasbench_cli.commands.lora_data import lora_record, print_lora_record

    if benchmark.name.startswith("nmt-"):
        gpt_record, print_gpt_record = nmt_record, print_nmt_record      # noqa: F811 (same shape, nmt's facts)
    if benchmark.name.startswith("lora-"):
        gpt_record, print_gpt_record = lora_record, print_lora_record    # noqa: F811 (its curves)

    if epochs not in (None, 1) or (epochs is not None and benchmark.name.startswith("lora-")):
        raise UserError(f"{benchmark.name}: leave out --epochs (" + ("the whole curve is shown" if benchmark.name.startswith(
            "lora-") else "no epochs: one evaluation per architecture") + ")")
    nearest = None
    if recipe_text is not None:
        row, nearest = find_gpt(benchmark, recipe_text)
    else:
        row = benchmark.search.index_of(arch_id)
    record = gpt_record(benchmark, row)
    if nearest is not None:           # not evaluated: the nearest evaluated one, and how far
        record = {"found": False, "nearest": {"id": nearest["id"], "distance": nearest["distance"]},
                  "asked": nearest["arch"], **record}
    echo_json(record) if as_json else print_gpt_record(record)
    if nearest is not None:
        raise click.exceptions.Exit(1)


def _query_bert(benchmark, arch_id, recipe_text, epochs, as_json):
    from benchmarks.core.errors import UserError
    from nasbench_cli.commands.bert_data import bert_record, find_architecture, print_bert_record

    if epochs not in (None, 1):
        raise UserError("bert has no epochs (one evaluation per architecture): leave out --epochs")
    if recipe_text is not None:
        row, facts = find_architecture(benchmark, recipe_text)
        if row is None:
            message = (f"the architecture is in the FlexiBERT space but not among the 500 evaluated; nearest "
                       f"evaluated: id {facts['nearest_id']} at Hamming distance {facts['hamming_distance']}")
            if as_json:
                echo_json({"found": False, "benchmark": "bert", "message": message, **facts})
            else:
                click.echo(message, err=True)
            raise click.exceptions.Exit(1)
    else:
        row = benchmark.search.index_of(arch_id)
    record = bert_record(benchmark, row)
    echo_json(record) if as_json else print_bert_record(record)
