"""Figures: regret-vs-time, CDF, rank and worker plots, and the paper's figures."""
