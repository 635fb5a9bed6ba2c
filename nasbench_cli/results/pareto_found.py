"""The AutoML 2022 competition's metric on NMTHPO (Zhang & Duh): how many of a pair's true Pareto-optimal
systems for (BLEU up, decode time down) a multi-objective search looked up within its first 200 lookups
(one lookup = one evaluation; a system looked up twice counts once). Reported beside HV regret for every
multi-objective run on an nmt-* benchmark."""
import numpy as np

LOOKUPS = 200


def published_front(benchmark_name: str) -> frozenset | None:
    """Ids of the pair's systems on its published `.fronts` (BLEU vs decode time), or None when the
    benchmark is not an nmt-* one or its data is not at hand."""
    if not benchmark_name.startswith("nmt-"):
        return None
    from benchmarks.core.errors import UserError
    from benchmarks.core.registry import load_benchmark
    from benchmarks.nmt.table import recorded

    try:
        search = load_benchmark(benchmark_name).search
    except UserError:
        return None
    return frozenset(int(i) for i in search.ids[np.flatnonzero(recorded(search, "published_front"))])


def found(record: dict, front: frozenset, lookups: int = LOOKUPS) -> int:
    """Distinct systems of `front` among the first `lookups` evaluations of one trial's record."""
    return len(front & set(int(a) for a in record["trajectory"]["arch"][:lookups]))


def summary(records: list) -> dict | None:
    """{"mean", "min", "max", "of", "lookups"} over the trials of one run, or None where it does not apply
    (not a multi-objective run on an nmt-* benchmark, or the data is not here)."""
    first = records[0]
    if not first.get("objectives"):
        return None
    front = published_front(first["benchmark"])
    if front is None:
        return None
    counts = [found(r, front) for r in records]
    return {"mean": float(np.mean(counts)), "min": int(min(counts)), "max": int(max(counts)), "of": len(front),
            "lookups": LOOKUPS}


def notes(report: dict) -> list[str]:
    """One line per benchmark of a report whose runs carry the count."""
    lines = []
    for name, bench in report["benchmarks"].items():
        parts = [f"{algo} {row['pareto_found']['mean']:.1f} ({row['pareto_found']['min']}-{row['pareto_found']['max']})"
                 for algo, row in bench["algorithms"].items() if row.get("pareto_found")]
        if parts:
            of = next(row["pareto_found"]["of"] for row in bench["algorithms"].values() if row.get("pareto_found"))
            lines.append(f"{name}: true Pareto-optimal systems (BLEU vs decode time) found within {LOOKUPS} lookups, "
                         f"mean (min-max) over trials, of {of}: " + ", ".join(parts))
    return lines
