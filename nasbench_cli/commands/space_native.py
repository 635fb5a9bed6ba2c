"""`nasbench space` on a benchmark searched in its own native space (bert, gpt-s/m/l): sample, show,
validate and stats in that space's terms, its choices (`SearchSpace.choices`, `to_values`), through
the `SearchSpace` protocol every space implements. The recurrent cells (ptb, wt2) keep their own
commands in `space.py` (recipes, nodes, canonical forms)."""
import json

import click

from benchmarks.core.errors import UserError
from nasbench_cli.commands.options import echo_json


def _space(benchmark_name: str, data_dir=None):
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir, test_losses=False)
    return benchmark, benchmark.search.space


def parse_architecture(space, text: str):
    """An architecture from JSON text or a JSON file: the data's own record (as the table holds it) or
    {choice: value} as `space sample` prints; UserError (one line) naming what is wrong."""
    from pathlib import Path

    source = Path(text)
    try:
        raw = source.read_text() if text.strip()[:1] not in "{[" and source.is_file() else text
        record = json.loads(raw)
    except (OSError, ValueError) as exc:
        raise UserError(f"not a JSON object or a file holding one: {str(exc).splitlines()[0]}") from None
    if not isinstance(record, dict):
        raise UserError(f"an architecture of {space.name} is a JSON object, got {type(record).__name__}")
    names = {choice.name for choice in space.choices()}
    if set(record) <= names:                       # {choice: value}, as `space sample` prints
        unknown = [c.name for c in space.choices() if c.name in record and record[c.name] not in c.values]
        if unknown:
            choice = next(c for c in space.choices() if c.name == unknown[0])
            raise UserError(f"{choice.name} {record[choice.name]!r} is not one of {list(choice.values)}")
        try:
            return space.from_values(record)
        except (KeyError, ValueError, TypeError) as exc:
            raise UserError(f"an architecture of {space.name} needs every active choice: {exc}") from None
    return space.parse(record)


def _rows_of(benchmark, space, arch) -> list[int]:
    """Ids of the table's architectures equal to `arch` (the same encoding)."""
    import numpy as np

    from benchmarks.core.space import encodings

    matrix = encodings(benchmark.search)
    same = np.flatnonzero((matrix == space.encode(arch)[None, :]).all(axis=1))
    return [int(benchmark.search.ids[row]) for row in same]


def sample(benchmark_name: str, count: int, seed: int, unique: bool, as_json: bool) -> None:
    import numpy as np

    _, space = _space(benchmark_name)
    rng, drawn, seen = np.random.default_rng(seed), [], set()
    attempts = 0
    while len(drawn) < count:
        attempts += 1
        if unique and attempts > 100 * max(count, 1):
            raise UserError(f"found only {len(drawn)} distinct architectures in {attempts} draws")
        values = space.to_values(space.sample(rng))
        key = json.dumps(values, sort_keys=True)
        if unique and key in seen:
            continue
        seen.add(key)
        drawn.append(values)
    if as_json:
        echo_json(drawn)
    else:
        for values in drawn:
            click.echo(json.dumps(values))


def show(benchmark_name: str, data_dir, arch_id, recipe_text, as_json: bool) -> None:
    benchmark, space = _space(benchmark_name, data_dir)
    if arch_id is not None:
        from benchmarks.core.space import architectures

        arch = architectures(benchmark.search)[benchmark.search.index_of(arch_id)]
    else:
        arch = parse_architecture(space, recipe_text)
    values = space.to_values(arch)
    same = _rows_of(benchmark, space, arch)
    record = {"benchmark": benchmark.name, "id": arch_id, "choices": values,
              "encoding": [float(x) for x in space.encode(arch)], "same_architecture_ids": same}
    if as_json:
        echo_json(record)
        return
    title = f"architecture {arch_id} ({benchmark.name})" if arch_id is not None else f"architecture ({benchmark.name})"
    click.echo(f"{title}: {len(values)} active choices")
    width = max(len(name) for name in values)
    for name, value in values.items():
        click.echo(f"  {name:<{width}}  {value}")
    if same:
        click.echo(f"in {benchmark.name}: id {', '.join(map(str, same[:10]))}{', ...' if len(same) > 10 else ''}")
    else:
        click.echo(f"in {benchmark.name}: not evaluated (no architecture of the table has these choices)")


def validate(benchmark_name: str, recipe_text: str, as_json: bool) -> None:
    _, space = _space(benchmark_name)
    try:
        arch = parse_architecture(space, recipe_text)
    except UserError as exc:
        if as_json:
            echo_json({"valid": False, "violations": [{"message": str(exc)}]})
        else:
            click.echo(f"invalid: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    values = space.to_values(arch)
    if as_json:
        echo_json({"valid": True, "choices": values})
    else:
        click.echo(f"valid: an architecture of {space.name} with {len(values)} active choices")


def stats(benchmark_name: str, data_dir, as_json: bool) -> None:
    """The space's choices and how the table covers them: per choice, how many architectures take each value."""
    import collections

    benchmark, space = _space(benchmark_name, data_dir)
    from benchmarks.core.space import architectures

    values = [space.to_values(arch) for arch in architectures(benchmark.search)]
    choices = []
    for choice in space.choices():
        counts = collections.Counter(v[choice.name] for v in values if choice.name in v)
        choices.append({"name": choice.name, "values": list(choice.values), "parent": choice.parent,
                        "active_in": sum(counts.values()),
                        "counts": {str(value): counts.get(value, 0) for value in choice.values}})
    distinct = len({json.dumps(v, sort_keys=True) for v in values})
    report = {"benchmark": benchmark.name, "space": space.name, "architectures": benchmark.search.n,
              "distinct_architectures": distinct, "choices": choices}
    if as_json:
        echo_json(report)
        return
    click.echo(f"{benchmark.name}: {report['architectures']} architectures ({distinct} distinct) of the {space.name} "
               f"space, {len(choices)} choices")
    width = max(len(c["name"]) for c in choices)
    for c in choices:
        spread = ", ".join(f"{value} {count}" for value, count in c["counts"].items())
        click.echo(f"  {c['name']:<{width}}  {spread}" + (f"  (active in {c['active_in']})"
                                                           if c["active_in"] != report["architectures"] else ""))
