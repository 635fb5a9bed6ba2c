"""Multi-fidelity schedulers: Hyperband (ours and the release's), ASHA and asynchronous Hyperband, and
ASHA with Gaussian-process models of its rungs (MOBSTER, Hyper-Tune).

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "hyperband": ("Hyperband", "HyperbandRelease",),
    "asha": ("ASHA", "AsyncHyperband",),
    "gp_asha": ("MOBSTER", "HyperTune",),
})
