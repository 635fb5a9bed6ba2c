"""Library adapters: Optuna, DEHB and SMAC's multi-fidelity facade through their ask/tell APIs, the shared
fidelity and snapping evaluators, and `NativeSpaceSearch` for libraries that search a benchmark's native space.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "OptunaTPE": "optuna_search", "SpaceOptuna": "optuna_search", "DEHBSearch": "dehb_search",
    "SMACMultiFidelity": "smac_multifidelity", "FidelityEvaluator": "fidelity_evaluation",
    "LibraryAdapter": "fidelity_evaluation", "SnappedEvaluator": "snapped_evaluation",
    "NativeSpaceSearch": "space_search",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.libraries.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
