"""The documentation site builds with --strict (no broken link, no missing API reference), the
README stays short, and every Python example in the docs runs as written."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    for name in ("load_benchmark", "SequentialAlgorithm", "SearchSpace", "Snapper", "Observation"):
        assert name in api
    assert (tmp_path / "site" / "figures" / "ptb-regret-vs-time.png").is_file()
    check_home_page((tmp_path / "site" / "index.html").read_text())
    objectives_page = (tmp_path / "site" / "results" / "hardware-aware" / "index.html").read_text()
    from benchmarks.core.catalog import BENCHMARKS

    for name, spec in BENCHMARKS.items():          # the objectives table names every benchmark's own
        for objective in spec.objectives:
            assert re.search(rf"<td>{re.escape(name)}</td>\s*<td><code>{objective}</code>", objectives_page), \
                (name, objective)


def check_home_page(html: str) -> None:
    """The built home page: every catalog benchmark as an item of a real list (not a run-on paragraph),
    the README's two commands, and the results figure."""
    from html.parser import HTMLParser

    from benchmarks.core.catalog import BENCHMARKS

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.stack, self.items, self.paragraphs, self.pre, self.images = [], [], [], [], []

        def handle_starttag(self, tag, attrs):
            self.stack.append([tag, ""])
            if tag == "img":
                self.images.append(dict(attrs).get("src", ""))

        def handle_endtag(self, tag):
            while self.stack:
                open_tag, text = self.stack.pop()
                if self.stack:
                    self.stack[-1][1] += text
                if open_tag == tag:
                    {"li": self.items, "p": self.paragraphs, "pre": self.pre}.get(tag, []).append(text)
                    break

        def handle_data(self, data):
            if self.stack:
                self.stack[-1][1] += data

    page = Page()
    page.feed(html)
    for name in BENCHMARKS:
        assert any(item.strip().startswith(f"{name}:") for item in page.items), f"{name} is not a list item"
    assert not any(p.count("- ") >= 2 and "ptb" in p for p in page.paragraphs), "a list rendered as a paragraph"
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```bash\n# [^\n]*\n([^\n]+)\n```", readme)
    assert len(commands) == 2
    for command in commands:
        assert any(command in block for block in page.pre), command
    assert any(src.endswith("figures/ptb-regret-vs-time.png") for src in page.images)


def test_readme_is_short_and_its_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).exists(), target


def python_blocks():
    for page in sorted(DOCS.rglob("*.md")):
        for k, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), re.S)):
            yield pytest.param(block, id=f"{page.relative_to(DOCS)}#{k}")


@pytest.mark.parametrize("code", list(python_blocks()))
def test_docs_python_examples_run(tmp_path, code, data_dir):
    pytest.importorskip("pandas")
    script = tmp_path / "example.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "NASBENCH_DATA": str(data_dir), "PYTHONPATH": str(ROOT)}, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_layout_page_names_every_package():
    """docs/concepts/layout.md names every package of benchmarks/, optimizers/ and nasbench_cli/ as `name/`."""
    page = (DOCS / "concepts" / "layout.md").read_text()
    tree = page.split("```text", 1)[1].split("```", 1)[0]
    packages = sorted({init.parent for top in ("benchmarks", "optimizers", "nasbench_cli")
                       for init in (ROOT / top).rglob("__init__.py")})
    assert len(packages) >= 11
    missing = [str(p.relative_to(ROOT)) for p in packages if not re.search(rf"(^|\s){re.escape(p.name)}/", tree, re.M)]
    assert not missing, f"docs/concepts/layout.md does not name: {', '.join(missing)}"


def test_ci_runs_exactly_the_readme_test_command_in_parallel():
    readme = (ROOT / "README.md").read_text()
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python3 -m venv")]
    assert len(ci) == 1 and f"\n{ci[0]}\n" in readme
    assert f"\n{ci[0]}\n" in (DOCS / "getting-started.md").read_text()     # the set-up page says the same
    assert "-n auto" in ci[0] and "--durations=" in ci[0]        # one test process per core; the slowest named


def test_the_api_pages_are_generated_from_every_public_function():
    """docs/howto/python-api.md and docs/reference/api.md list the API through mkdocstrings (signatures
    from the code), each naming every public function of `import nasbench`."""
    import inspect

    import nasbench

    functions = {name for name in nasbench.__all__ if inspect.isfunction(getattr(nasbench, name))}
    assert {"run", "load_benchmark", "load_results"} <= functions
    for page in ("howto/python-api.md", "reference/api.md"):
        text = (DOCS / page).read_text()
        block = text.split("::: nasbench_cli.api", 1)[1].split("\n\n", 1)[0]
        listed = set(re.findall(r"^\s+- (\w+)$", block, re.M))
        assert listed == functions, (page, functions ^ listed)
