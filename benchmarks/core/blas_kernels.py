"""Pin the BLAS kernels, so that float64 results are the same on every x86-64 CPU type.

OpenBLAS (under numpy, scipy and gensim) picks its kernels by CPU at load time: on a CPU with AVX-512
it uses its `SkylakeX` kernels, on one with AVX2 only its `Haswell` ones, and the two sum in different
orders. That moves a training-free score by about 1e-12 (relative) and our graph2vec features by
enough to change a model-based search's trajectory. The shipped score tables and the recorded
reference trajectories were made with the Haswell kernels, so on every x86-64 CPU with AVX2 and FMA
nasbench asks OpenBLAS for those (`OPENBLAS_CORETYPE=Haswell`), and asks torch's MKL and oneDNN for
their AVX2 code paths too (`MKL_CBWR=AVX2`, `ONEDNN_MAX_CPU_ISA=AVX2`; measured to leave the scores
unchanged on an AVX-512 AMD EPYC, not checked on an Intel CPU with AVX-512).

This only works before numpy is first imported in the process, so nasbench's top-level packages call
`pin()` first thing; a variable the user set is left as it is. `active_kernel()` tells which kernel
OpenBLAS really uses, and `kernel_note()` says in one line when it is not the reference one.
"""
from __future__ import annotations

import os
import platform
import sys

REFERENCE_KERNEL = "Haswell"
_PINS = {"OPENBLAS_CORETYPE": REFERENCE_KERNEL, "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def _cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none, e.g. macOS)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def can_pin() -> bool:
    """Whether this CPU runs the reference kernels: x86-64 with AVX2 and FMA (Linux)."""
    return platform.machine().lower() in ("x86_64", "amd64") and {"avx2", "fma"} <= _cpu_flags()


def pin() -> None:
    """Ask for the reference kernels, unless the user chose others; without effect where the CPU cannot
    run them or numpy is already loaded (`kernel_note` then says so)."""
    if can_pin() and "numpy" not in sys.modules:
        for name, value in _PINS.items():
            os.environ.setdefault(name, value)


def active_kernel() -> str | None:
    """The kernel set OpenBLAS uses in this process (e.g. 'Haswell', 'SkylakeX'), or None before numpy
    is imported or where OpenBLAS is not numpy's BLAS."""
    if "numpy" not in sys.modules:
        return None
    from threadpoolctl import threadpool_info

    kernels = [pool.get("architecture") for pool in threadpool_info() if pool.get("internal_api") == "openblas"]
    return kernels[0] if kernels else None


def kernel_note() -> str | None:
    """One line when OpenBLAS does not use the reference kernels in this process, else None."""
    kernel = active_kernel()
    if kernel is None or kernel == REFERENCE_KERNEL:
        return None
    chosen = os.environ.get("OPENBLAS_CORETYPE", "")
    why = ("this CPU cannot run them" if not can_pin()
           else f"OPENBLAS_CORETYPE is set to {chosen!r}" if chosen and chosen.lower() != REFERENCE_KERNEL.lower()
           else "numpy was imported before nasbench")
    return (f"OpenBLAS uses its {kernel} kernels here, not the {REFERENCE_KERNEL} ones the shipped scores "
            f"and reference runs were made with ({why}): training-free scores and graph2vec features "
            f"built here may differ from theirs in the last digits")
