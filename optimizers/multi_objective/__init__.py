"""Multi-objective search (`--objectives`): random search, MOASHA, MOREA, ParEGO, mo-lcbo, and Optuna's
NSGA-II and MOTPE.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "algorithms": ("MORandomSearch", "SingleFidelityMORandomSearch", "MOASHA", "MORegularizedEvolution",
                   "SpaceMORegularizedEvolution", "ParEGO", "SpaceParEGO", "MOLearningCurveBO",),
    "optuna_samplers": ("NSGA2", "MOTPE",),
})
