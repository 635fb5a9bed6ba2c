"""No import cycles among the project's own modules (imports inside functions included): data flows
down once, benchmark -> environment -> optimizer -> trajectory -> result file -> report and figures,
and a lower floor never imports a higher one (docs/concepts/layout.md). The finder itself is checked
on a planted cycle, so that a passing test means something."""
import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("benchmarks", "optimizers", "nasbench_cli")


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """{dotted module name: file} of every module under `packages` in `root` (a package is its __init__)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imported(node, name: str, is_package: bool, modules) -> list[str]:
    """The project modules one import statement of module `name` loads, most specific first: `from p import
    m` of a submodule m is an edge to p.m (its package's __init__ runs anyway, as for any submodule)."""
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        submodules = [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in modules]
        names = [alias.name for alias in node.names if f"{source}.{alias.name}" not in modules]
        candidates = submodules + ([source] if names else [])
    found = []
    for target in candidates:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.append(target)
    return found


def import_graph(root: Path, packages=PACKAGES) -> nx.DiGraph:
    """Module -> module edges for every import statement anywhere in a module (top level or in a function)."""
    modules = module_files(root, packages)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(node, name, path.name == "__init__.py", modules):
                    graph.add_edge(name, target)
    return graph


def cycles(root: Path, packages=PACKAGES) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.simple_cycles(import_graph(root, packages)))


def test_the_project_has_no_import_cycles():
    graph = import_graph(REPO)
    assert graph.number_of_nodes() > 100 and graph.number_of_edges() > 300    # the graph was really read
    found = cycles(REPO)
    assert found == [], "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_finder_sees_a_planted_cycle_through_an_import_inside_a_function(tmp_path):
    package = tmp_path / "nasbench_cli"
    (package / "harness").mkdir(parents=True)
    (package / "results").mkdir()
    for folder in (package, package / "harness", package / "results"):
        (folder / "__init__.py").write_text("")
    (package / "results" / "files.py").write_text(
        "def check():\n    from nasbench_cli.harness.trial import settings_hash\n    return settings_hash\n")
    (package / "harness" / "trial.py").write_text("from ..results import files\n\ndef settings_hash():\n    pass\n")
    (package / "harness" / "runner.py").write_text("from nasbench_cli.harness import trial\n")
    assert cycles(tmp_path, ("nasbench_cli",)) == [["nasbench_cli.harness.trial", "nasbench_cli.results.files"]]
    (package / "results" / "files.py").write_text("from nasbench_cli.results import record\n")
    (package / "results" / "record.py").write_text("import json\n")
    assert cycles(tmp_path, ("nasbench_cli",)) == []


def test_a_package_importing_its_own_submodules_is_not_a_cycle(tmp_path):
    package = tmp_path / "benchmarks" / "proxies"
    package.mkdir(parents=True)
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from benchmarks.proxies.score_cache import load\n")
    (package / "score_cache.py").write_text("def load():\n    from benchmarks.proxies import minibatch\n")
    (package / "minibatch.py").write_text("")
    assert cycles(tmp_path, ("benchmarks",)) == []
    (package / "minibatch.py").write_text("from benchmarks.proxies import load\n")     # a name from the package
    assert cycles(tmp_path, ("benchmarks",)) == [["benchmarks.proxies", "benchmarks.proxies.minibatch",
                                                  "benchmarks.proxies.score_cache"]]


def test_each_algorithm_family_exposes_its_registry_classes():
    """optimizers/ is grouped by family; each subpackage's face names classes of its own modules, loads
    none until one is used, and together they hold every class the registry names."""
    import importlib
    import subprocess
    import sys

    from optimizers.registry import ALGORITHMS

    families = sorted(p.name for p in (REPO / "optimizers").iterdir() if (p / "__init__.py").is_file())
    assert families == ["baselines", "evolution", "learning_curve", "libraries", "model_based", "multi_fidelity", "multi_objective",
                        "training_free"]
    exposed = {}
    for family in families:
        face = importlib.import_module(f"optimizers.{family}")
        for name in face.__all__:
            cls = getattr(face, name)
            assert cls.__module__.startswith(f"optimizers.{family}."), (family, name)
            exposed[f"{cls.__module__}:{name}"] = cls
    targets = {target for _, variants in ALGORITHMS.values() for target in variants}
    assert targets <= set(exposed), sorted(targets - set(exposed))
    lazy = subprocess.run([sys.executable, "-c", "import sys, optimizers.model_based, optimizers.libraries; "
                           "print(sorted(m for m in sys.modules if m.startswith('optimizers.')))"],
                          capture_output=True, text=True, cwd=REPO)
    assert "optimizers.model_based.smac_search" not in lazy.stdout and "optuna_search" not in lazy.stdout
