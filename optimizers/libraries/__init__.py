"""Library adapters: Optuna, DEHB, SMAC's multi-fidelity facade and syne-tune's schedulers through their
ask/tell (or scheduler) APIs, the shared
fidelity and snapping evaluators, and `NativeSpaceSearch` for libraries that search a benchmark's native space.

Its classes load on first use (the registry imports a module only for the algorithm that runs).
"""
from optimizers.families import lazy_face

__all__, __getattr__ = lazy_face(__name__, {   # module -> its public classes
    "optuna_search": ("OptunaTPE", "SpaceOptuna",),
    "dehb_search": ("DEHBSearch",),
    "smac_multifidelity": ("SMACMultiFidelity",),
    "synetune_search": ("SyneTuneSearch", "STRandomSearch", "STBORE", "STKDE", "STREA", "STASHA", "STBOHB",
                        "STASHABORE", "STMOASHA", "STMOREA"),
    "fidelity_evaluation": ("FidelityEvaluator", "LibraryAdapter",),
    "snapped_evaluation": ("SnappedEvaluator",),
    "space_search": ("NativeSpaceSearch",),
})
