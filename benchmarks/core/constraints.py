"""Budgets on objectives (`--constraint params<=6e6`): parsing and feasibility.

A constraint bounds one objective of the benchmark (natural direction and unit, e.g. GLUE points on
bert) with `<=`, `<`, `>=` or `>`. An architecture is feasible when every constraint holds; on the
loss objective, for the point an architecture is judged by (its best epoch): on validation when the
searcher's front or incumbent is chosen, on test when it is scored, so a find that is infeasible on
test does not count.
"""
import math
import re
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError

_PATTERN = re.compile(r"^\s*([a-z_]+)\s*(<=|>=|<|>)\s*([^\s<>=]+)\s*$")
_OPS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}


@dataclass(frozen=True)
class Constraint:
    objective: str
    op: str
    bound: float

    def __str__(self) -> str:
        return f"{self.objective}{self.op}{self.bound!r}"

    def holds(self, values) -> np.ndarray:
        """Elementwise: does the constraint hold for `values` (natural direction)? NaN: no."""
        values = np.asarray(values, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return _OPS[self.op](values, self.bound) & ~np.isnan(values)


def parse_constraint(text: str, benchmark: str) -> Constraint:
    """'params<=6e6' -> Constraint; UserError (one line) for a malformed bound or an objective the
    benchmark lacks."""
    from benchmarks.core.objectives import OBJECTIVES, benchmark_objectives

    match = _PATTERN.match(str(text))
    if not match:
        raise UserError(f"malformed constraint {text!r}: write OBJECTIVE<=NUMBER (or <, >=, >), e.g. params<=6e6")
    name, op, bound_text = match.groups()
    if name not in OBJECTIVES:
        raise UserError(f"constraint {text!r}: unknown objective '{name}'; objectives are {', '.join(OBJECTIVES)}")
    offered = benchmark_objectives(benchmark)
    if name not in offered:
        raise UserError(f"constraint {text!r}: benchmark '{benchmark}' has no objective '{name}'; "
                        f"it offers {', '.join(offered)}")
    try:
        bound = float(bound_text)
    except ValueError:
        raise UserError(f"constraint {text!r}: {bound_text!r} is not a number") from None
    if not math.isfinite(bound):
        raise UserError(f"constraint {text!r}: the bound must be a finite number")
    return Constraint(name, op, bound)


def parse_constraints(texts, benchmark: str) -> tuple:
    """Several constraints (a list of strings, or one comma-separated string), de-duplicated in order."""
    if isinstance(texts, str):
        texts = [texts]
    parsed = []
    for text in texts or ():
        for part in str(text).split(","):
            if part.strip():
                constraint = parse_constraint(part, benchmark)
                if constraint not in parsed:
                    parsed.append(constraint)
    return tuple(parsed)
