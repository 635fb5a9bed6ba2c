"""Model-based search: the paper's bagged-XGBoost BO over graph2vec (and over a space's encoding), TPE and SMAC."""
from optimizers.model_based.bayesian import BO10d, BO50d, BayesianOptimisation, SpaceBO
from optimizers.model_based.tpe import TPE, SpaceTPE
from optimizers.model_based.smac_search import SMAC, SpaceSMAC

__all__ = ["BO10d", "BO50d", "BayesianOptimisation", "SpaceBO", "TPE", "SpaceTPE", "SMAC", "SpaceSMAC"]
