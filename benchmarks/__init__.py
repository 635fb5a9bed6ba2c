"""NAS-Bench-NLP data, the cell search space, features and the simulated training environment.

This layer knows nothing of optimizers or the CLI.
"""
