"""Library adapters: Optuna, DEHB and SMAC's multi-fidelity facade through their ask/tell APIs, the shared
fidelity and snapping evaluators, and `NativeSpaceSearch` for libraries that search a benchmark's native space."""
from optimizers.libraries.optuna_search import OptunaTPE, SpaceOptuna
from optimizers.libraries.dehb_search import DEHBSearch
from optimizers.libraries.smac_multifidelity import SMACMultiFidelity
from optimizers.libraries.fidelity_evaluation import FidelityEvaluator, LibraryAdapter
from optimizers.libraries.snapped_evaluation import SnappedEvaluator
from optimizers.libraries.space_search import NativeSpaceSearch

__all__ = ["OptunaTPE", "SpaceOptuna", "DEHBSearch", "SMACMultiFidelity", "FidelityEvaluator", "LibraryAdapter", "SnappedEvaluator", "NativeSpaceSearch"]
