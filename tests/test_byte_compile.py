"""The test run's byte-compile step (tests/conftest.py): the controlling process compiles the modules the
suite imports before the xdist workers start, from the folders scripts/list_imported_dirs.py listed."""
import importlib.util
import os
import sys
import sysconfig
from pathlib import Path

import pytest

import conftest

REPO = Path(__file__).resolve().parents[1]
TAG = sys.implementation.cache_tag


def _lister():
    spec = importlib.util.spec_from_file_location("list_imported_dirs", REPO / "scripts" / "list_imported_dirs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyc(folder: Path, name: str, tag: str = TAG) -> None:
    (folder / "__pycache__").mkdir(parents=True, exist_ok=True)
    (folder / "__pycache__" / f"{name}.{tag}.pyc").write_bytes(b"")


def test_the_lister_names_the_folders_holding_this_pythons_compiled_modules(tmp_path):
    site = tmp_path / "site-packages"
    for folder in ("alpha", "alpha/sub", "beta", "gamma", "delta"):
        (site / folder).mkdir(parents=True)
    _pyc(site, "six")                                        # a top-level module: the folder itself
    _pyc(site / "alpha", "__init__")
    _pyc(site / "alpha" / "sub", "core")
    _pyc(site / "beta", "mod", tag="cpython-27")             # another Python's cache: not imported by this one
    (site / "gamma" / "__pycache__").mkdir()                 # an empty cache folder
    (site / "delta" / "__pycache__").mkdir()
    (site / "delta" / "__pycache__" / f"mod.{TAG}.opt-1.pyc").write_bytes(b"")   # compiled with -O: not ours
    lister = _lister()
    assert lister.imported_dirs(site) == [".", "alpha", "alpha/sub"]
    out = tmp_path / "list.txt"
    assert lister.main(["--out", str(out), "--site-packages", str(site)]) == 0
    assert out.read_text() == ".\nalpha\nalpha/sub\n"


def test_the_lister_refuses_a_folder_with_nothing_compiled(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        _lister().main(["--out", str(tmp_path / "list.txt"), "--site-packages", str(tmp_path)])
    assert stop.value.code == 2 and "run the test suite in this environment first" in capsys.readouterr().err
    assert not (tmp_path / "list.txt").exists()


def test_the_sources_are_the_projects_and_the_listed_folders_modules():
    sources = conftest._sources_to_compile()
    assert len(sources) == len(set(sources))
    assert str(REPO / "nasbench_cli" / "main.py") in sources and str(REPO / "tests" / "conftest.py") in sources
    site = Path(sysconfig.get_paths()["purelib"])
    listed = conftest.IMPORTED_DIRS.read_text().split()
    present = [folder for folder in listed if (site / folder).is_dir()]
    # a stale list costs only time, but one that has mostly gone stale should be made again
    assert len(present) >= 0.9 * len(listed), "run scripts/list_imported_dirs.py after the suite in a fresh venv"
    assert str(site / "numpy" / "__init__.py") in sources and str(site / "click" / "core.py") in sources


def test_a_compiled_module_is_the_cache_import_reads(tmp_path, monkeypatch):
    source = tmp_path / "compiled_here.py"
    source.write_text("VALUE = 41 + 1\n")
    conftest._compile_one(str(source))
    cache = Path(importlib.util.cache_from_source(str(source)))
    assert cache.exists()
    written = cache.stat().st_mtime_ns
    os.utime(cache, ns=(written - 10**9, written - 10**9))    # so a rewrite on import would show
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("compiled_here")
    assert module.VALUE == 42 and module.__cached__ == str(cache)
    assert cache.stat().st_mtime_ns == written - 10**9        # import read the cache; it did not compile again
    conftest._compile_one(str(source))                        # up to date: left as it is
    assert cache.stat().st_mtime_ns == written - 10**9
