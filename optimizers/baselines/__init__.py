"""Baselines: random search at a fixed number of epochs (the release's RS-50E / RS-10E) and with one
evaluation per architecture; the one-epoch top-K baseline.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "random_search": ("RandomSearch", "RandomSearch10", "RandomSearch50", "SingleFidelityRandomSearch",),
    "one_epoch": ("OneEpochTopK",),
})
