"""NAS algorithms, one module each, and their registry."""
import benchmarks  # noqa: F401  (first: it pins the BLAS kernels before numpy loads)
