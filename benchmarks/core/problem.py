"""The problem a run scores: its objectives and constraints, parsed and checked against a benchmark."""


def scoring_problem(benchmark: str, objectives=(), constraints=()) -> tuple[tuple, tuple]:
    """(objective names, Constraint objects) of a run from names or 'a,b' text and constraint texts or
    objects; () for the default single-objective run (also when only the loss objective is named);
    UserError (one line) for anything the benchmark lacks, or when several objectives need moocore and it
    is not installed."""
    names, parsed = parse_problem(benchmark, objectives, constraints)
    if names:
        from benchmarks.core.pareto import require_moocore

        require_moocore()
    return names, parsed


def parse_problem(benchmark: str, objectives=(), constraints=()) -> tuple[tuple, tuple]:
    """`scoring_problem` without asking for moocore: for describing a problem (a suite file's task)
    before anything is scored."""
    from benchmarks.core.constraints import Constraint, parse_constraints
    from benchmarks.core.errors import UserError
    from benchmarks.core.objectives import loss_objective, parse_objectives

    text = objectives if isinstance(objectives, str) else ",".join(objectives or ())
    names = [n.strip() for n in text.split(",") if n.strip()]
    loss = loss_objective(benchmark)
    if names == [loss]:
        names = []
    elif len(names) == 1:
        parse_objectives(f"{names[0]},{loss}", benchmark)         # an unknown name: that one line
        raise UserError(f"the single objective on '{benchmark}' is '{loss}'; to budget '{names[0]}' use "
                        f"--constraint (e.g. '{names[0]}<=...'), to search both --objectives {loss},{names[0]}")
    names = parse_objectives(",".join(names), benchmark) if names else ()
    texts = [c for c in (constraints or ()) if not isinstance(c, Constraint)]
    parsed = tuple(c for c in (constraints or ()) if isinstance(c, Constraint)) + parse_constraints(texts, benchmark)
    return names, tuple(dict.fromkeys(parsed))
