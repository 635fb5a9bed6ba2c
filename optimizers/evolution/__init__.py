"""Evolution: regularized evolution in graph2vec feature space (the release) or in a space's native encoding.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "RegularizedEvolution": "regularized_evolution", "SpaceRegularizedEvolution":
    "regularized_evolution",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.evolution.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
