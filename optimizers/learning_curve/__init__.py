"""Learning-curve methods: DPL (deep power laws, Kadra et al. 2023) and DyHPO (deep-kernel GP, Wistuba et al.
2022) and FT-PFN through ifbo (Rakotoarison et al. 2024), freeze-thaw one step at a time.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "dpl": ("DeepPowerLaw",),
    "freeze_thaw": ("FreezeThawSearch",),
    "dyhpo": ("DyHPO",),
    "ftpfn": ("FTPFNSearch",),
})
