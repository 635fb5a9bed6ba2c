"""`--set KEY=VALUE` / `--set ALGO.KEY=VALUE`: which selected algorithm's setting each one changes."""


def parse_overrides(items, algos, benchmark: str | None = None) -> dict:
    """`--set KEY=VALUE` (every selected algorithm with that setting) or `--set ALGO.KEY=VALUE`."""
    import dataclasses

    from benchmarks.core.errors import UserError
    from optimizers.registry import algorithm_class, algorithm_name, make_algorithm

    for a in algos:                      # a plugin whose Settings is not a dataclass: its one-line error
        make_algorithm(a, None, benchmark)
    fields = {a: {f.name for f in dataclasses.fields(algorithm_class(a, benchmark).Settings)} for a in algos}
    key_of = {algorithm_name(a): a for a in algos} | {a: a for a in algos}
    overrides = {a: {} for a in algos}
    for item in items:
        if "=" not in item:
            raise UserError(f"--set expects KEY=VALUE or ALGO.KEY=VALUE, got '{item}'")
        key, value = item.split("=", 1)
        targets = algos
        if "." in key:
            algo, key = key.split(".", 1)
            if algo not in key_of:
                raise UserError(f"--set {item}: '{algo}' is not among the selected algorithms "
                                f"({', '.join(algorithm_name(a) for a in algos)})")
            targets = [key_of[algo]]
        matched = [a for a in targets if key in fields[a]]
        if not matched:
            raise UserError(f"--set {item}: no selected algorithm has a setting '{key}' "
                            f"(settings: " + "; ".join(f"{a}: {', '.join(sorted(fields[a]))}" for a in targets) + ")")
        if key == "features" and benchmark is not None:
            from benchmarks.core.features import used_kind

            if used_kind(benchmark, value) != value:     # a stand-in would run: refuse the other name
                raise UserError(f"--set {item}: {benchmark} ships no graph2vec features; say what should run: "
                                f"--set features={used_kind(benchmark, value)} (what the default stands in with)")
        for algo in matched:
            overrides[algo][key] = value
    return overrides
