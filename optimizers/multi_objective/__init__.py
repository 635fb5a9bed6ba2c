"""Multi-objective search (`--objectives`): random search, MOASHA, MOREA, ParEGO, mo-lcbo, and Optuna's NSGA-II and MOTPE."""
from optimizers.multi_objective.algorithms import MORandomSearch, SingleFidelityMORandomSearch, MOASHA, MORegularizedEvolution, SpaceMORegularizedEvolution, ParEGO, SpaceParEGO, MOLearningCurveBO
from optimizers.multi_objective.optuna_samplers import NSGA2, MOTPE

__all__ = ["MORandomSearch", "SingleFidelityMORandomSearch", "MOASHA", "MORegularizedEvolution", "SpaceMORegularizedEvolution", "ParEGO", "SpaceParEGO", "MOLearningCurveBO", "NSGA2", "MOTPE"]
