"""Benchmarks: the shared core (`benchmarks.core`) and one subpackage per search space.

- `core`: tables, the simulated environment, regret, the catalog and registry, features, paths, errors.
- `cells`: NAS-Bench-NLP's recurrent cells (ptb, wt2): logs, recipes, canonical form, graph2vec, analyses.
- `flexibert`: NAS-Bench-BERT's FlexiBERT transformers (bert).
- `proxies`: training-free metrics of recurrent cells and their score tables.

This layer knows nothing of optimizers or the command line.
"""
from benchmarks.core.blas_kernels import pin as _pin_blas_kernels

_pin_blas_kernels()   # before anything imports numpy: the same float64 results on every x86-64 CPU type
