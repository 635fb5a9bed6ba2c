"""`nasbench space`: a benchmark's search space: sample, show, validate, stats. The recurrent cells
(ptb, wt2) in their terms (recipes, nodes, canonical forms); every other space through the search-space
protocol, in its choices (`space_native`)."""

import click

from nasbench_cli.commands.options import benchmark_option, data_dir_option, echo_json, json_option


def is_cell_benchmark(name: str) -> bool:
    from benchmarks.core.registry import get_spec

    return get_spec(name).loader.startswith("benchmarks.cells")


@click.group()
def space():
    """A benchmark's search space (--benchmark): random architectures, readable ones, validity, statistics.

    ptb, wt2: a cell ("recipe") is a JSON object {node: {"op": OP, "input": [names]}} reading x and
    h_prev_i and defining h_new_0..h_new_{k-1} (h_new_0 is the output). bert, gpt-s/m/l: an
    architecture is its choices, {choice: value} (`space stats` lists them), or the data's own record.
    """


def cell_lines(cell) -> list[str]:
    """One line per node in topological order, like `h_new_0 = activation_tanh(f)`."""
    return [f"{name} = {cell.nodes[name].op}({', '.join(cell.nodes[name].inputs)})"
            for name in cell.topological_order()]


@space.command()
@click.option("-n", "count", type=click.IntRange(min=0), required=True, help="How many cells to draw.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True, help="Random seed (same seed, same cells).")
@click.option("--unique", is_flag=True, help="Skip architectures already drawn (cells: by canonical form).")
@benchmark_option
@json_option
def sample(count, seed, unique, benchmark_name, as_json):
    """Draw N random valid architectures of the benchmark's space.

    ptb, wt2: with the NAS-Bench-NLP generator procedure, one recipe (compact JSON) per line. Other
    spaces: one {choice: value} object per line. --json: a JSON list.
    """
    if not is_cell_benchmark(benchmark_name):
        from nasbench_cli.commands import space_native

        space_native.sample(benchmark_name, count, seed, unique, as_json)
        return
    from benchmarks.cells.generator import sample_cells

    cells = sample_cells(count, seed=seed, unique=unique)
    if as_json:
        echo_json([c.to_recipe() for c in cells])
    else:
        for cell in cells:
            click.echo(cell.to_json())


@space.command()
@click.argument("arch_id", type=int, required=False)
@click.option("--recipe", "recipe_text", default=None, metavar="FILE_OR_JSON",
              help="Show this architecture (JSON text or a JSON file) instead of an id; it is looked up in "
                   "the benchmark (cells: by canonical form).")
@click.option("--lookup/--no-lookup", default=True, show_default=True,
              help="With --recipe on ptb/wt2: look the cell up in the benchmark (needs the data).")
@benchmark_option
@data_dir_option
@json_option
def show(arch_id, recipe_text, lookup, benchmark_name, data_dir, as_json):
    """Show an architecture readably. ptb, wt2: one line per node in topological order, the canonical
    hash and the benchmark architectures with the same canonical form. Other spaces: one line per
    choice, and the benchmark architectures with the same choices.

    ARCH_ID is an id of the benchmark; or give --recipe FILE_OR_JSON.
    """
    from benchmarks.core.errors import UserError

    if (arch_id is None) == (recipe_text is None):
        raise UserError("give exactly one of ARCH_ID or --recipe FILE_OR_JSON")
    if not is_cell_benchmark(benchmark_name):
        from nasbench_cli.commands import space_native

        space_native.show(benchmark_name, data_dir, arch_id, recipe_text, as_json)
        return
    from benchmarks.cells.canonical import canonical_form, canonical_hash, lookup_all
    from benchmarks.cells.recipe import parse_cell, validate, violations
    benchmark = None
    if arch_id is not None or lookup:
        from benchmarks.core.registry import load_benchmark

        benchmark = load_benchmark(benchmark_name, data_dir)
    if arch_id is not None:
        row = benchmark.search.index_of(arch_id)
        cell = validate(parse_cell(benchmark.search.recipe(row)))
    else:
        cell = validate(parse_cell(recipe_text))
    same = list(lookup_all(benchmark, cell)) if benchmark is not None else None
    strict = [v.message for v in violations(cell, strict=True)]
    record = {
        "recepie_id": arch_id,
        "benchmark": benchmark.name if benchmark is not None else None,
        "recipe": cell.to_recipe(),
        "lines": cell_lines(cell),
        "n_nodes": len(cell),
        "n_hidden": cell.n_hidden,
        "canonical_hash": canonical_hash(cell),
        "canonical_form": canonical_form(cell),
        "same_canonical_form_ids": same,
        "generator_rule_notes": strict,
    }
    if as_json:
        echo_json(record)
        return
    title = f"architecture {arch_id} ({benchmark.name})" if arch_id is not None else "cell"
    click.echo(f"{title}: {len(cell)} nodes, {cell.n_hidden} hidden state(s); "
               f"inputs {', '.join(cell.input_names)}; output h_new_0")
    for line in record["lines"]:
        click.echo(f"  {line}")
    click.echo(f"canonical hash  {record['canonical_hash']}")
    if same is not None:
        if not same:
            click.echo(f"benchmark       no architecture of '{benchmark.name}' has this canonical form")
        else:
            shown = ", ".join(map(str, same[:10])) + (f", ... ({len(same)} in all)" if len(same) > 10 else "")
            click.echo(f"same cell in {benchmark.name}: {shown}")
    for note in strict:
        click.echo(f"note            {note}")


@space.command("validate")
@click.argument("recipe_text", metavar="FILE_OR_JSON")
@click.option("--strict", is_flag=True,
              help="ptb, wt2: also apply the generator-only rule: no h_new_i reads an h_prev_j directly.")
@benchmark_option
@json_option
def validate_cmd(recipe_text, strict, benchmark_name, as_json):
    """Check an architecture against the benchmark's space (cells: its rules; other spaces: their
    choices and values). Exit 0 if valid, 2 if not (reasons printed)."""
    if not is_cell_benchmark(benchmark_name):
        from nasbench_cli.commands import space_native

        space_native.validate(benchmark_name, recipe_text, as_json)
        return
    from benchmarks.cells.recipe import parse_cell, violations

    found = violations(recipe_text, strict=strict)
    cell = None if found else parse_cell(recipe_text)
    if as_json:
        echo_json({"valid": not found,
                   "violations": [{"rule": r, "node": n, "message": m} for r, n, m in found]})
    elif not found:
        click.echo(f"valid: {len(cell)} nodes, {cell.n_hidden} hidden state(s)")
    else:
        for rule, _, message in found:
            click.echo(f"invalid ({rule}): {message}", err=True)
    if found:
        raise click.exceptions.Exit(2)


@space.command()
@benchmark_option
@data_dir_option
@click.option("--samples", type=click.IntRange(min=0), default=0, show_default=True,
              help="ptb, wt2: also draw this many random cells and report their canonical duplicates and how "
                   "many are benchmark architectures.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True, help="Seed for --samples.")
@json_option
def stats(benchmark_name, data_dir, samples, seed, as_json):
    """ptb, wt2: validate every recipe of the benchmark (architectures breaking each rule) and count
    the architectures that share a canonical form with another one. Other spaces: each choice and how
    many of the benchmark's architectures take each of its values."""
    if not is_cell_benchmark(benchmark_name):
        from nasbench_cli.commands import space_native

        space_native.stats(benchmark_name, data_dir, as_json)
        return
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir)
    report = space_stats(benchmark)
    if samples:
        report["generator"] = generator_stats(benchmark, samples, seed)
    if as_json:
        echo_json(report)
        return
    click.echo(f"{report['benchmark']}: {report['architectures']} architectures, {report['valid']} valid, "
               f"{report['valid_strict']} also pass the generator-only rule")
    for rule, count in report["violations"].items():
        ids = report["violating_ids"].get(rule, [])
        example = f"  e.g. {', '.join(map(str, ids[:5]))}" if ids else ""
        click.echo(f"  {rule:<16} {count:>6}{example}")
    n = report["nodes"]
    click.echo(f"nodes per cell: max {n['max']} (with inputs x, h_prev_i: {n['max_with_inputs']}), "
               f"mean {n['mean']:.2f}; hidden states: "
               + ", ".join(f"{k}: {v}" for k, v in report["hidden_states"].items()))
    c = report["canonical"]
    click.echo(f"canonical forms: {c['distinct_canonical_forms']} distinct; {c['architectures_in_duplicate_groups']} "
               f"architectures share one with another ({c['duplicate_groups']} groups, "
               f"{c['redundant_architectures']} redundant)")
    for group in c["largest_groups"][:3]:
        click.echo(f"  {len(group)} x the same cell: {', '.join(map(str, group[:8]))}{', ...' if len(group) > 8 else ''}")
    if "generator" in report:
        g = report["generator"]
        click.echo(f"generator (seed {g['seed']}): {g['samples']} valid cells from {g['attempts']} attempts "
                   f"(rejected: {', '.join(f'{k} {v}' for k, v in g['rejected'].items()) or 'none'}); "
                   f"{g['distinct_canonical_forms']} distinct canonical forms, duplicate share "
                   f"{g['duplicate_share']:.4f}; {g['in_benchmark']} samples ({g['in_benchmark_share']:.4f}) are "
                   f"{report['benchmark']} architectures ({g['distinct_benchmark_forms_hit']} distinct); hidden states: "
                   + ", ".join(f"{k}: {v}" for k, v in g["hidden_states"].items()))


def generator_stats(benchmark, samples: int, seed: int) -> dict:
    """Draw `samples` cells: rejections, canonical duplicate share, share that are benchmark architectures."""
    from benchmarks.cells.canonical import benchmark_hashes, hash_or_none
    from benchmarks.cells.generator import sample_cells_with_stats

    cells, counts = sample_cells_with_stats(samples, seed=seed)
    hashes = [hash_or_none(c) for c in cells]
    known = set(benchmark_hashes(benchmark))
    hits = [h for h in hashes if h in known]
    hidden: dict[int, int] = {}
    for cell in cells:
        hidden[cell.n_hidden] = hidden.get(cell.n_hidden, 0) + 1
    return {
        "seed": seed, "samples": len(cells), "attempts": counts["attempts"],
        "rejected": dict(sorted(counts["rejected"].items())),
        "distinct_canonical_forms": len(set(hashes)),
        "duplicate_share": 1 - len(set(hashes)) / len(hashes) if hashes else 0.0,
        "in_benchmark": len(hits), "in_benchmark_share": len(hits) / len(hashes) if hashes else 0.0,
        "distinct_benchmark_forms_hit": len(set(hits)),
        "hidden_states": {str(k): hidden[k] for k in sorted(hidden)},
    }


def space_stats(benchmark) -> dict:
    """Rule violation counts (architectures per rule), node/hidden counts and duplicate summary."""
    from benchmarks.cells.canonical import duplicate_summary
    from benchmarks.cells.recipe import RULES, InvalidCellError, parse_cell, violations

    search = benchmark.search
    counts = {rule: 0 for rule in RULES}
    ids_by_rule: dict[str, list] = {}
    valid = valid_strict = 0
    sizes, with_inputs, hidden = [], [], {}
    for rid, text in zip(search.ids, search.recipes):
        try:
            cell = parse_cell(text)
        except InvalidCellError:
            cell = None
        found = violations(cell if cell is not None else text, strict=True)
        rules = {v.rule for v in found}
        for rule in rules:
            counts[rule] += 1
            ids_by_rule.setdefault(rule, []).append(int(rid))
        valid += not (rules - {"direct_hidden"})
        valid_strict += not rules
        if cell is not None:
            sizes.append(len(cell))
            with_inputs.append(len(cell) + len(cell.input_names))
            hidden[cell.n_hidden] = hidden.get(cell.n_hidden, 0) + 1
    return {
        "benchmark": benchmark.name,
        "architectures": search.n,
        "valid": valid,
        "valid_strict": valid_strict,
        "violations": counts,
        "violating_ids": {rule: ids[:20] for rule, ids in ids_by_rule.items()},
        "nodes": {"max": max(sizes, default=0), "max_with_inputs": max(with_inputs, default=0),
                  "mean": sum(sizes) / len(sizes) if sizes else 0.0},
        "hidden_states": {str(k): hidden[k] for k in sorted(hidden)},
        "canonical": duplicate_summary(benchmark),
    }
