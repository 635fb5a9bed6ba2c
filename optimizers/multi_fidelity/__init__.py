"""Multi-fidelity schedulers: Hyperband (ours and the release's), ASHA and asynchronous Hyperband.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "Hyperband": "hyperband", "HyperbandRelease": "hyperband", "ASHA": "asha", "AsyncHyperband":
    "asha",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.multi_fidelity.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
