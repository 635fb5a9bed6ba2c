"""Evolution: regularized evolution in graph2vec feature space (the release) or in a space's native encoding.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "regularized_evolution": ("RegularizedEvolution", "SpaceRegularizedEvolution",),
})
