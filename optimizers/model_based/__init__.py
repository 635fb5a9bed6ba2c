"""Model-based search: the paper's bagged-XGBoost BO over graph2vec (and over a space's encoding), TPE and
SMAC.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "bayesian": ("BO10d", "BO50d", "BayesianOptimisation", "SpaceBO",),
    "tpe": ("TPE", "SpaceTPE",),
    "smac_search": ("SMAC", "SpaceSMAC",),
})
