"""Results as they stood at an earlier simulated time: what `report --at` and `export --at` compare."""
import re

from benchmarks.core.errors import UserError

HOURS = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(h|e|evals?)?\s*$")


def parse_hours(text: str) -> list[float]:
    """'10h,100h,1000' -> [10.0, 100.0, 1000.0]: points of the benchmark's clock, hours (the 'h' is
    optional) or, on gpt-*, evaluations ('50e' or '50evals'); UserError if malformed."""
    hours = []
    for item in text.split(","):
        match = HOURS.match(item)
        value = float(match.group(1)) if match else None
        if value is None or not value > 0 or value == float("inf"):
            raise UserError(f"--at expects positive hours like 10h,100h,1000h (evaluations on gpt-*: 25,50); "
                            f"got '{item.strip()}'")
        hours.append(value)
    return sorted(set(hours))


def record_at(record: dict, time_s: float) -> dict:
    """`record` cut at simulated time `time_s` (seconds): the jobs that ended by then, the final regret
    then, and `budget_s` = min(budget, time_s). Everything else (settings, compute_s) is unchanged."""
    traj = record["trajectory"]
    keep = sum(1 for t in traj["time_s"] if t <= time_s)
    cut = dict(record)
    cut["trajectory"] = {key: values[:keep] for key, values in traj.items()}
    if isinstance(record.get("jobs"), dict):
        cut["jobs"] = {key: values[:keep] for key, values in record["jobs"].items()}
    cut["final_regret"] = cut["trajectory"]["regret"][-1] if keep else None
    cut["budget_s"] = min(record["budget_s"], time_s)
    cut["n_evaluations"] = keep
    return cut


def results_at(results, time_s: float = None, at: float = None):
    """A copy of a `results_io.Results` with every record cut at `time_s` clock seconds, or at `at` in
    each benchmark's clock units (hours, or evaluations on gpt-*)."""
    from nasbench_cli.results.aggregate import clock_unit_s
    from nasbench_cli.results.files import Results

    def cut_s(bench):
        return time_s if at is None else at * clock_unit_s(bench)

    return Results(root=results.root, runs={bench: {label: [record_at(r, cut_s(bench)) for r in records]
                                                    for label, records in runs.items()}
                                            for bench, runs in results.runs.items()})
