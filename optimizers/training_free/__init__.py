"""Training-free-guided search: proxy-guided random search and Hyperband, and `lcbo`, which rank new cells by
a training-free score (hidden covariance) before paying for epochs.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "ScoredCandidates": "candidates", "ProxyRandomSearch": "proxy_random_search", "ProxyHyperband":
    "proxy_hyperband", "LearningCurveBO": "lcbo",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.training_free.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
