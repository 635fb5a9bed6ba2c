"""MkDocs hook: `<!-- catalog:benchmarks -->` in a page becomes the list of the catalog's benchmarks
(`benchmarks.core.catalog.BENCHMARKS`, the one source `--benchmark` itself reads), so the site's pages
cannot name fewer benchmarks than the command line offers."""
import sys
from pathlib import Path

MARKER = "<!-- catalog:benchmarks -->"


def benchmark_list() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.core.catalog import BENCHMARKS

    return "\n".join(f"- `{name}`: {spec.description}" for name, spec in BENCHMARKS.items())


def on_page_markdown(markdown: str, **kwargs) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, "\n" + benchmark_list() + "\n")
    return markdown
