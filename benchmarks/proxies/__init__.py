"""Training-free metrics for NAS-Bench-NLP cells (Serianni & Kalita, ACL 2023) and their cached table.

Modules: `cell_graph` (recipe -> ordered graph, analytic parameter count; no torch), `network` (the
cell and the AWD-LSTM-style macro model in PyTorch), `metrics` (one function per metric),
`minibatch` (PTB vocabulary and the scoring minibatch), `score_cache` (the resumable table),
`build` (a scoring run), `analysis` (correlations, published values, ablations).

The minibatch. The authors' code scores each cell on one batch of the PTB test split with the logs'
`eval_batch_size` 50 and `bptt` 70 (3,500 tokens). On the 2-core CPU machine this project is built
on, a forward pass costs about 2 x (cell parameters) FLOPs per token (~14 MFLOP for an average cell,
6.8 M cell parameters), and the gradient metrics need two backward passes on top: ~6 CPU s per cell
at 50 x 70, which is 15 CPU hours for the benchmark. We use 32 sequences x 20 tokens (640 tokens;
start positions drawn from the seed): 640 samples still exceed the 600 hidden units, so the hidden
correlation matrix can be full rank, and 32 sequences give a 32 x 32 matrix for the Jacobian and
activation metrics. Measured with one thread (`nasbench proxies build`, `nasbench proxies status`):
all metrics of a cell in one pass 1.82 CPU s (median of 998 random cells; 2.05 s wall on the shared
2-core machine), hidden_covariance_l1 alone about 0.25 s (only layer 1 is built and run). Other
sizes: `--batch-size`, `--seq-len` (each size has its own cache).

Readers that need no torch: `load_scores(benchmark, metric)` -> float64 [n] (NaN = unscored,
-inf = scored but not finite) and
`seconds_per_score(benchmark, metric)` (measured CPU seconds per cell, for charging simulated time).
"""
from benchmarks.proxies.score_cache import (DEFAULT_SECONDS_PER_SCORE, ScoreCache, load_scores,
                                            seconds_per_score)

__all__ = ["DEFAULT_SECONDS_PER_SCORE", "ScoreCache", "load_scores", "seconds_per_score"]
