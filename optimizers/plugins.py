"""Algorithms from outside nasbench: `--algo module:Class`, `--algo path/to/file.py:Class`, and names
that installed packages register under the entry-point group `nasbench.optimizers`.

A plugin is a class derived from nasbench's `Algorithm` (import it as `from nasbench import Algorithm`),
built as `cls(settings)` with a frozen dataclass `Settings` (its fields are what `--set` changes). Its
name in results and plots is the class's `name` attribute (or the class name), which must not be a
built-in algorithm's.

Every trial record of a plugin carries `algorithm_source`: how it was named (`spec`), where it came
from (the module, the file) and the SHA-256 of the class's source file, plus the distribution and
version for an entry point. `nasbench run` refuses to resume from files made by another version of
that code (`same_source`).

Our own `benchmarks`, `optimizers` and `nasbench_cli` are already imported when a plugin loads, so a
user's folder of one of those names cannot replace them; `module:Class` is looked up on sys.path with
the current folder appended (after ours), and a file plugin's folder is appended too, so that the
plugin's own helper modules import.
"""
import hashlib
import importlib
import importlib.metadata
import importlib.util
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
        except Exception as exc:
            raise UserError(f"plugin {what} failed to import: {type(exc).__name__}: {exc}") from None
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
    source["sha256"] = _source_hash(cls)
    return cls, source


def same_source(recorded: dict | None, current: dict | None) -> bool:
    """Whether a result file's `algorithm_source` and the code loaded now are the same version: same
    kind, class and source-file hash (and distribution version for an entry point)."""
    if recorded is None or current is None:
        return recorded is None and current is None
    keys = ("kind", "class", "sha256", "distribution", "version")
    return all(recorded.get(k) == current.get(k) for k in keys)


def _import_module(name: str, what: str):
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.append(cwd)                      # after our packages: a user's folder never shadows them
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise UserError(f"plugin {what} failed to import: {type(exc).__name__}: {exc}") from None


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
    except Exception as exc:
        del sys.modules[name]
        raise UserError(f"plugin {what} failed to import: {type(exc).__name__}: {exc}") from None
    return module


def _source_hash(cls) -> str | None:
    """SHA-256 (16 hex digits) of the file that defines `cls`, or None if it has none."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
