"""NAS-Bench-BERT (bert): the FlexiBERT search space, its ConfigSpace and the 500 evaluated transformers."""
