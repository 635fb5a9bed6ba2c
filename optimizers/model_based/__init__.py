"""Model-based search: the paper's bagged-XGBoost BO over graph2vec (and over a space's encoding), TPE and SMAC.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "BO10d": "bayesian", "BO50d": "bayesian", "BayesianOptimisation": "bayesian", "SpaceBO":
    "bayesian", "TPE": "tpe", "SpaceTPE": "tpe", "SMAC": "smac_search", "SpaceSMAC": "smac_search",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.model_based.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
