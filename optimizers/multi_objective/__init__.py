"""Multi-objective search (`--objectives`): random search, MOASHA, MOREA, ParEGO, mo-lcbo, and Optuna's NSGA-II and MOTPE.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
import importlib

_MODULE_OF = {   # class -> its module in this package
    "MORandomSearch": "algorithms", "SingleFidelityMORandomSearch": "algorithms", "MOASHA":
    "algorithms", "MORegularizedEvolution": "algorithms", "SpaceMORegularizedEvolution":
    "algorithms", "ParEGO": "algorithms", "SpaceParEGO": "algorithms", "MOLearningCurveBO":
    "algorithms", "NSGA2": "optuna_samplers", "MOTPE": "optuna_samplers",
}
__all__ = list(_MODULE_OF)


def __getattr__(name):
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"optimizers.multi_objective.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
