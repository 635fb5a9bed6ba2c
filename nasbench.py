"""nasbench's Python API: `import nasbench`, then `nasbench.load_benchmark("ptb")`, `nasbench.run(...)`,
`nasbench.load_results(...)`; see the README ("Python API") and `help(nasbench)`.

nasbench's code lives in the top-level packages `benchmarks`, `optimizers` and `nasbench_cli`. A
user's own folder of one of those names (in the working directory of a notebook, say) would shadow
them on `sys.path`, so this module imports ours explicitly, by location, before anything else: after
`import nasbench`, those three names always mean nasbench's, and a clash that already happened (a
foreign `optimizers` imported first) is an ImportError saying which folder to rename.
"""
import importlib.util
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent
_PACKAGES = ("benchmarks", "optimizers", "nasbench_cli")


def _import_ours() -> None:
    for name in _PACKAGES:
        folder = _ROOT / name
        module = sys.modules.get(name)
        if module is not None:
            where = Path(getattr(module, "__file__", "") or ".").resolve().parent
            if where != folder:
                raise ImportError(f"a package named '{name}' from {where} was imported before nasbench; it "
                                  f"shadows nasbench's own '{name}' ({folder}): rename your folder")
            continue
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


_import_ours()

from nasbench_cli import __version__  # noqa: E402
from nasbench_cli.api import *  # noqa: E402,F401,F403
from nasbench_cli.api import __all__ as _api_names  # noqa: E402

__all__ = ["__version__", *_api_names]
