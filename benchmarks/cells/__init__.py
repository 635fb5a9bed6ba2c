"""NAS-Bench-NLP's recurrent cells (ptb, wt2): logs, recipes, canonical form, generator, graph2vec, analyses."""
