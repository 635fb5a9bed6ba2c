"""MkDocs hook: `<!-- catalog:benchmarks -->` in a page becomes the list of the catalog's benchmarks
(`benchmarks.core.catalog.BENCHMARKS`, the one source `--benchmark` itself reads), so the site's pages
cannot name fewer benchmarks than the command line offers."""
import sys
from pathlib import Path

MARKER = "<!-- catalog:benchmarks -->"
OBJECTIVES_MARKER = "<!-- catalog:objectives -->"
COST_MARKER = "<!-- catalog:trial-cost -->"


def benchmark_list() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS

    return "\n".join(f"- `{name}`: {spec.description}" for name, spec in BENCHMARKS.items())


def objectives_table() -> str:
    """One row per benchmark and objective: unit, direction, when a searcher sees it, what it is."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS
    from benchmarks.core.objectives import known_before_training, objective_for

    rows = ["| benchmark | objective | unit | direction | a searcher sees it | what it is |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name, spec in BENCHMARKS.items():
        for k, objective_name in enumerate(spec.objectives):
            o = objective_for(objective_name, name)
            seen = "for every architecture before training" if known_before_training(objective_name, name) else \
                ("per epoch trained (validation; test for scoring)" if k == 0 and not spec.single_fidelity
                 else "once trained or evaluated")
            rows.append(f"| {name} | `{objective_name}`{' (loss)' if k == 0 else ''} | {o.unit} | "
                        f"{'max' if o.maximise else 'min'} | {seen} | {o.description} |")
    return "\n".join(rows)


def trial_cost_table() -> str:
    """CPU seconds per trial of each algorithm on each benchmark at its default budget, from the table
    `nasbench run` estimates from (scripts/measure_trial_cost.py measured it)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS
    from nasbench_cli.harness.cost_estimate import MEASURED, at_one_worker, machine_of, measured_table

    table = measured_table(MEASURED)
    costs = table.get("costs", {})
    names = [name for name in BENCHMARKS if name in costs]
    algos = list(dict.fromkeys(algo for name in names for algo in costs[name]))
    budget = {name: f"{BENCHMARKS[name].default_budget:g} {BENCHMARKS[name].clock_short}" for name in names}
    rows = ["| algorithm | " + " | ".join(f"{name} ({budget[name]})" for name in names) + " |",
            "| --- |" + " ---: |" * len(names)]
    def cell(name, algo):
        entry = at_one_worker(costs[name].get(algo))
        if entry is None:
            return "–"
        default = BENCHMARKS[name].default_budget
        elsewhere = "†" if machine_of(entry, table) != machine_of({}, table) else ""   # not the table's machine
        if entry["budget"] != default:     # measured at a smaller budget: scaled, as `run` scales it
            return f"~{entry['compute_s'] * default / entry['budget']:.0f}*{elsewhere}"
        return f"{entry['compute_s']:.2f}{elsewhere}"

    for algo in algos:
        rows.append(f"| `{algo}` | " + " | ".join(cell(name, algo) for name in names) + " |")
    return "\n".join(rows) + (f"\n\nCPU seconds per trial; measured {table.get('measured', '')} on "
                              f"{table.get('machine', 'one machine')} ({table.get('how', '')}); * measured at a "
                              "smaller budget and scaled linearly to the default; † measured on another CPU (the entry's "
                              "`machine` and `how` in nasbench_cli/harness/trial_cost.json say which, when and how).")


def on_page_markdown(markdown: str, **kwargs) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, "\n" + benchmark_list() + "\n")
    if OBJECTIVES_MARKER in markdown:
        markdown = markdown.replace(OBJECTIVES_MARKER, "\n" + objectives_table() + "\n")
    if COST_MARKER in markdown:
        markdown = markdown.replace(COST_MARKER, "\n" + trial_cost_table() + "\n")
    return markdown
