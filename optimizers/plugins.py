"""Algorithms from outside nasbench: `--algo module:Class`, `--algo path/to/file.py:Class`, and names
that installed packages register under the entry-point group `nasbench.optimizers`.

A plugin is a class derived from nasbench's `Algorithm` (import it as `from nasbench import Algorithm`),
built as `cls(settings)` with a frozen dataclass `Settings` (its fields are what `--set` changes). Its
name in results and plots is the class's `name` attribute (or the class name), which must not be a
built-in algorithm's.

Every trial record of a plugin carries `algorithm_source`: how it was named (`spec`), where it came
from (the module, the file), the SHA-256 of the class's source file (`sha256`) and of every source file
the plugin runs from its own folder or package (`sources`, see `plugin_sources`), plus the distribution
and version for an entry point. `nasbench run` refuses to resume from files made by another version of
that code (`same_source`): a changed helper module counts, and the same file named as `module:Class` or
as `file.py:Class` is the same code.

Our own `benchmarks`, `optimizers` and `nasbench_cli` are already imported when a plugin loads, so a
user's folder of one of those names cannot replace them; `module:Class` is looked up on sys.path with
the current folder appended (after ours), and a file plugin's folder is appended too, so that the
plugin's own helper modules import.
"""
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
from pathlib import Path

from benchmarks.core.errors import UserError

ENTRY_POINT_GROUP = "nasbench.optimizers"


def is_plugin_spec(text: str) -> bool:
    """True for 'module:Class' and 'file.py:Class' (built-in and entry-point names have no colon)."""
    return ":" in text


def entry_points() -> dict:
    """Installed entry points of the group `nasbench.optimizers`: {name: EntryPoint}."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def canonical_spec(text: str) -> str:
    """A plugin spec that resolves the same from any folder and process: a file path made absolute."""
    target, _, attr = text.strip().rpartition(":")
    if target.endswith(".py"):
        return f"{Path(target).expanduser().resolve()}:{attr}"
    return f"{target}:{attr}"


def load_class(spec: str) -> tuple[type, dict]:
    """(class, source) of a plugin spec or an entry-point name; UserError naming the plugin if it cannot
    be imported or is not a nasbench algorithm."""
    from optimizers.base import Algorithm

    points = entry_points()
    if not is_plugin_spec(spec):
        if spec not in points:
            raise UserError(f"unknown algorithm '{spec}'; see `nasbench list`")
        point = points[spec]
        what = f"entry point '{spec}' ({point.value})"
        try:
            cls = point.load()
        except (Exception, SystemExit) as exc:
            raise UserError(f"plugin {what} failed to import: {_import_failure(exc)}") from None
        dist = getattr(point, "dist", None)
        source = {"kind": "entry-point", "spec": spec, "target": point.value,
                  "distribution": dist.name if dist else None, "version": dist.version if dist else None}
    else:
        target, _, attr = spec.rpartition(":")
        what = f"'{spec}'"
        if not target or not attr:
            raise UserError(f"plugin {what}: expected module:Class or path/to/file.py:Class")
        if target.endswith(".py"):
            module = _import_file(Path(target), what)
            source = {"kind": "file", "spec": spec, "target": str(Path(target).resolve())}
        else:
            module = _import_module(target, what)
            source = {"kind": "module", "spec": spec, "target": target}
        cls = getattr(module, attr, None)
        if cls is None:
            raise UserError(f"plugin {what}: {target} has no attribute '{attr}'")
    if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
        raise UserError(f"plugin {what}: {getattr(cls, '__name__', cls)!r} is not a class derived from "
                        "nasbench's Algorithm (from nasbench import Algorithm)")
    # a file plugin's module name depends on its path: name it by file name, so a moved clone matches
    source["class"] = f"{Path(source['target']).name}:{cls.__qualname__}" if source["kind"] == "file" \
        else f"{cls.__module__}.{cls.__qualname__}"
    source.update(class_provenance(cls))
    return cls, source


def same_source(recorded: dict | None, current: dict | None) -> bool:
    """Whether a result file's `algorithm_source` and the code loaded now are the same version: the same
    class (by qualified name) from the same source file, the same helper files (`sources`; files written
    before they were recorded compare by the class's file alone) and, for an entry point, the same
    distribution version. Code whose source cannot be read (a class typed into `python -`) is never the
    same: a resume could not be checked."""
    if recorded is None or current is None:
        return recorded is None and current is None
    if current.get("sha256") is None or recorded.get("sha256") is None:
        return False
    if "qualname" in recorded:
        same_class = recorded["qualname"] == current.get("qualname")
    else:   # written before qualname was recorded
        same_class = (recorded.get("kind"), recorded.get("class")) == (current.get("kind"), current.get("class"))
    if "sources" in recorded and recorded["sources"] != current.get("sources"):
        return False
    keys = ("sha256", "distribution", "version")
    return same_class and all(recorded.get(k) == current.get(k) for k in keys)


def changed_sources(recorded: dict | None, current: dict | None) -> list[str]:
    """The helper files (relative paths) whose content differs between two `algorithm_source`s."""
    there, here = (recorded or {}).get("sources") or {}, (current or {}).get("sources") or {}
    return sorted(name for name in set(there) | set(here) if there.get(name) != here.get(name))


def class_provenance(cls) -> dict:
    """`qualname`, `sha256` (16 hex digits of the class's source file, or of its source text where it has
    no file, e.g. a notebook cell; None where neither can be read) and `sources` ({relative path: 16 hex
    digits} of every source file the plugin runs from its own folder or package)."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file():
        return {"qualname": cls.__qualname__, "sha256": _digest(Path(path).read_bytes()),
                "sources": plugin_sources(module)}
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):
        text = None
    return {"qualname": cls.__qualname__, "sha256": _digest(text.encode()) if text else None, "sources": {}}


def plugin_sources(module) -> dict[str, str]:
    """{path: 16 hex digits of SHA-256} of the source files a plugin module runs from its own code: for a
    module inside a package, every `.py` file of its top-level package (paths from the package's parent
    folder); for a single-file module (a file plugin, or a top-level module), the module and every module
    it imports, directly or not, from its own folder (found by reading the imports, so the set does not
    depend on what else this process imported). Libraries installed elsewhere are not included: their
    versions are the environment's."""
    path = Path(module.__file__).resolve()
    name = module.__spec__.name if getattr(module, "__spec__", None) else module.__name__
    package = sys.modules.get(name.split(".")[0]) if "." in name else None
    if package is not None and getattr(package, "__file__", None):
        root = Path(package.__file__).resolve().parent
        files = [f for f in root.rglob("*.py") if "__pycache__" not in f.parts]
        base = root.parent
    elif {"site-packages", "dist-packages"} & set(path.parent.parts):   # an installed module: its version says it
        base, files = path.parent, [path]
    else:
        base = path.parent
        files = [path, *_imported_from(path, base)]
    return {str(f.relative_to(base)): _digest(f.read_bytes()) for f in sorted(set(files))}


def _imported_from(script: Path, folder: Path) -> list[Path]:
    """Source files under `folder` that `script` imports, directly or through each other."""
    from modulefinder import ModuleFinder

    finder = ModuleFinder(path=[str(folder)])
    try:
        finder.run_script(str(script))
    except (SyntaxError, ImportError, OSError, ValueError):
        return []
    found = []
    for name, mod in finder.modules.items():
        file = getattr(mod, "__file__", None)
        if name != "__main__" and file and Path(file).resolve().is_relative_to(folder) and file.endswith(".py"):
            found.append(Path(file).resolve())
    return found


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _import_module(name: str, what: str):
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.append(cwd)                      # after our packages: a user's folder never shadows them
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:
        raise UserError(f"plugin {what} failed to import: {_import_failure(exc)}") from None


def _import_file(path: Path, what: str):
    path = path.expanduser().resolve()
    if not path.is_file():
        raise UserError(f"plugin {what}: no such file {path}")
    name = f"nasbench_plugin_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module                    # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        raise UserError(f"plugin {what} failed to import: {_import_failure(exc)}") from None
    return module


def _import_failure(exc: BaseException) -> str:
    """One line for what went wrong while a plugin was imported (sys.exit included: it ends only the plugin)."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) while being imported"
    return f"{type(exc).__name__}: {exc}"
