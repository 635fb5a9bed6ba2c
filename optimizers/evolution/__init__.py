"""Evolution: regularized evolution in graph2vec feature space (the release) or in a space's native encoding."""
from optimizers.evolution.regularized_evolution import RegularizedEvolution, SpaceRegularizedEvolution

__all__ = ["RegularizedEvolution", "SpaceRegularizedEvolution"]
