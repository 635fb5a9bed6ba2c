"""NAS algorithms and their registry.

At the top: the ask/tell protocol (`base`), run labels (`labels`), plugin loading (`plugins`), the
registry of names (`registry`) and snapping to evaluated architectures (`snapping`). One subpackage per
family, each with a short public face: `baselines` (random search), `multi_fidelity` (Hyperband, ASHA),
`model_based` (BO, TPE, SMAC), `evolution` (regularized evolution), `libraries` (Optuna, DEHB, SMAC's
multi-fidelity facade), `multi_objective`, `training_free` (proxy-guided search, `lcbo`). The names on
the command line and in result files are the registry's, whatever module a class lives in.
"""
import benchmarks  # noqa: F401  (first: it pins the BLAS kernels before numpy loads)
