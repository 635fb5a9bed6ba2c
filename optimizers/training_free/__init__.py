"""Training-free-guided search: proxy-guided random search and Hyperband, and `lcbo`, which rank new cells by
a training-free score (hidden covariance) before paying for epochs.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "candidates": ("ScoredCandidates",),
    "proxy_random_search": ("ProxyRandomSearch",),
    "proxy_hyperband": ("ProxyHyperband",),
    "lcbo": ("LearningCurveBO",),
})
