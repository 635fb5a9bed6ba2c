"""nasbench's command line and Python API (see `nasbench.py` for the public import surface).

Importing this package first imports nasbench's own `benchmarks` and `optimizers` by location (the
folders next to this one), so that a user's folder of the same name on sys.path (the working
directory of a notebook, a plugin's folder, which loky hands to worker processes) can never replace
them; a foreign one imported earlier is an ImportError saying which folder to rename.
"""
import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

_ROOT = Path(__file__).resolve().parent.parent


def import_ours(names=("benchmarks", "optimizers")) -> None:
    """Import nasbench's top-level packages `names` from their folders next to `nasbench_cli`."""
    for name in names:
        folder = _ROOT / name
        module = sys.modules.get(name)
        if module is not None:
            where = Path(getattr(module, "__file__", None) or "?").resolve().parent
            if where != folder:
                raise ImportError(f"a package named '{name}' from {where} was imported before nasbench; it "
                                  f"shadows nasbench's own '{name}' ({folder}): rename your folder")
            continue
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise


import_ours()
