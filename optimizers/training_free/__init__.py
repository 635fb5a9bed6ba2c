"""Training-free-guided search: proxy-guided random search and Hyperband, and `lcbo`, which rank new cells by
a training-free score (hidden covariance) before paying for epochs."""
from optimizers.training_free.candidates import ScoredCandidates
from optimizers.training_free.proxy_random_search import ProxyRandomSearch
from optimizers.training_free.proxy_hyperband import ProxyHyperband
from optimizers.training_free.lcbo import LearningCurveBO

__all__ = ["ScoredCandidates", "ProxyRandomSearch", "ProxyHyperband", "LearningCurveBO"]
