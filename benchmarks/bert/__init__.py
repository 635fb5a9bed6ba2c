"""NAS-Bench-BERT (Serianni & Kalita, 2023): 500 FlexiBERT transformers pretrained with ELECTRA and
fine-tuned on GLUE. `space`: the FlexiBERT search space as code; `table`: the 500 as a benchmark."""
