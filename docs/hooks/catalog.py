"""MkDocs hook: `<!-- catalog:benchmarks -->` in a page becomes the list of the catalog's benchmarks
(`benchmarks.core.catalog.BENCHMARKS`, the one source `--benchmark` itself reads), so the site's pages
cannot name fewer benchmarks than the command line offers."""
import sys
from pathlib import Path

MARKER = "<!-- catalog:benchmarks -->"
OBJECTIVES_MARKER = "<!-- catalog:objectives -->"


def benchmark_list() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS

    return "\n".join(f"- `{name}`: {spec.description}" for name, spec in BENCHMARKS.items())


def objectives_table() -> str:
    """One row per benchmark and objective: unit, direction, when a searcher sees it, what it is."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS
    from benchmarks.core.objectives import OBJECTIVES

    rows = ["| benchmark | objective | unit | direction | a searcher sees it | what it is |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name, spec in BENCHMARKS.items():
        for k, objective_name in enumerate(spec.objectives):
            o = OBJECTIVES[objective_name]
            seen = "for every architecture before training" if o.known_before_training else \
                ("per epoch trained (validation; test for scoring)" if k == 0 and not spec.single_fidelity
                 else "once trained or evaluated")
            rows.append(f"| {name} | `{objective_name}`{' (loss)' if k == 0 else ''} | {o.unit} | "
                        f"{'max' if o.maximise else 'min'} | {seen} | {o.description} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **kwargs) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, "\n" + benchmark_list() + "\n")
    if OBJECTIVES_MARKER in markdown:
        markdown = markdown.replace(OBJECTIVES_MARKER, "\n" + objectives_table() + "\n")
    return markdown
