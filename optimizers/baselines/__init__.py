"""Baselines: random search at a fixed number of epochs (the release's RS-50E / RS-10E) and with one evaluation per architecture."""
from optimizers.baselines.random_search import RandomSearch, RandomSearch10, RandomSearch50, SingleFidelityRandomSearch

__all__ = ["RandomSearch", "RandomSearch10", "RandomSearch50", "SingleFidelityRandomSearch"]
