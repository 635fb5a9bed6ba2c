"""Benchmarks: the shared core (`benchmarks.core`) and one subpackage per search space.

- `core`: tables, the simulated environment, regret, the catalog and registry, features, paths, errors.
- `cells`: NAS-Bench-NLP's recurrent cells (ptb, wt2): logs, recipes, canonical form, graph2vec, analyses.
- `flexibert`: NAS-Bench-BERT's FlexiBERT transformers (bert).
- `proxies`: training-free metrics of recurrent cells and their score tables.

This layer knows nothing of optimizers or the command line.
"""
