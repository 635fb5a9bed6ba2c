"""Baselines: random search at a fixed number of epochs (the release's RS-50E / RS-10E) and with one evaluation per architecture.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "RandomSearch": "random_search", "RandomSearch10": "random_search", "RandomSearch50":
    "random_search", "SingleFidelityRandomSearch": "random_search",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.baselines.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
