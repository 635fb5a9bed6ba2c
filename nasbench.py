"""nasbench's Python API: `import nasbench`, then `nasbench.load_benchmark("ptb")`, `nasbench.run(...)`,
`nasbench.load_results(...)`; see the README ("Python API") and `help(nasbench)`.

nasbench's code lives in the top-level packages `benchmarks`, `optimizers` and `nasbench_cli`. A
user's own folder of one of those names (in the working directory of a notebook, say) would shadow
them on sys.path, so this module imports `nasbench_cli` from its folder next to this file, and
`nasbench_cli` imports the other two the same way (`nasbench_cli.import_ours`): after
`import nasbench` those names always mean nasbench's, and a clash that already happened (a foreign
`optimizers` imported first) is an ImportError saying which folder to rename.
"""
import importlib.util as _importlib_util
import sys as _sys
from pathlib import Path as _Path


def _import_cli() -> None:
    folder = _Path(__file__).resolve().parent / "nasbench_cli"
    module = _sys.modules.get("nasbench_cli")
    if module is not None:
        where = _Path(getattr(module, "__file__", None) or "?").resolve().parent
        if where != folder:
            raise ImportError(f"a package named 'nasbench_cli' from {where} was imported before nasbench; "
                              f"it shadows nasbench's own ({folder}): rename your folder")
        return
    spec = _importlib_util.spec_from_file_location("nasbench_cli", folder / "__init__.py",
                                                   submodule_search_locations=[str(folder)])
    module = _importlib_util.module_from_spec(spec)
    _sys.modules["nasbench_cli"] = module
    spec.loader.exec_module(module)


_import_cli()

from nasbench_cli import __version__  # noqa: E402
from nasbench_cli.api import *  # noqa: E402,F401,F403
from nasbench_cli.api import __all__ as _api_names  # noqa: E402

__all__ = ["__version__", *_api_names]
