"""Pin the BLAS kernels and numpy's vector code paths, so that float64 results are the same on every
x86-64 CPU type with AVX2.

OpenBLAS (under numpy, scipy and gensim) picks its kernels by CPU at load time: on a CPU with AVX-512
it uses its `SkylakeX` kernels, on one with AVX2 only its `Haswell` ones, and the two sum in different
orders. That moves a training-free score by about 1e-12 (relative) and our graph2vec features by
enough to change a model-based search's trajectory. The shipped score tables and the recorded
reference trajectories were made with the Haswell kernels, so on every x86-64 CPU with AVX2 and FMA
nasbench asks OpenBLAS for those (`OPENBLAS_CORETYPE=Haswell`), and asks torch's MKL and oneDNN for
their AVX2 code paths too (`MKL_CBWR=AVX2,STRICT`, `ONEDNN_MAX_CPU_ISA=AVX2`).

MKL (torch's BLAS and LAPACK) follows `MKL_CBWR` on Intel CPUs only; on others it takes its AUTO branch
(Intel's documentation), which is what the shipped score tables were made with, on an AMD EPYC (600 of 600
cells rescored there exactly, with `MKL_CBWR=AVX2` or without). On an Intel Xeon with AVX-512 (family 6,
model 167) the AVX2 branch alone still gave other float32 matrix products: 4 of 20 rescored ptb cells equal
to the shipped scores, the rest up to 8e-6 apart. Its strict mode (`STRICT`: the same result whatever
the data's alignment and place in the batch) gives the shipped scores bit for bit: 200 of 200 ptb cells
and 60 of 60 wt2 cells (`MKL_CBWR=AVX2` without it: 1 of 60 on wt2, up to 1.7e-5 apart), and DPL's
predictions for one row are then the same whatever batch they are computed in, as on the AMD EPYC.

numpy, too, picks its own vector code by CPU when it loads: with AVX-512 its `exp`, `log`, `log1p`,
`expm1` and `power` of float64 take other code paths than with AVX2 only, and their results differ in
the last bit for some inputs. Optuna's TPE (its Parzen estimators), its multi-objective TPE, SMAC
(its forest fitted to log-scaled costs) and syne-tune's Hyper-Tune turn that into other trajectories
(optuna: 11 to 15 of 30 trials on bert, gpt-s and gpt-m; hypertune: 28 of 30 on wt2;
docs/howto/custom-data.md lists them). So nasbench also
switches numpy's AVX-512 paths off (`NPY_DISABLE_CPU_FEATURES`, with the names the installed numpy
knows: `numpy_avx512_features`); numpy then runs the AVX2 paths, as on a CPU without AVX-512.

This only works before numpy is first imported in the process, so nasbench's top-level packages call
`pin()` first thing; a variable the user set is left as it is. `active_kernel()` tells which kernel
OpenBLAS really uses, `numpy_uses_avx512()` whether numpy's AVX-512 paths are on, and `kernel_note()`
says in one line when either is not the reference.
"""
from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path

REFERENCE_KERNEL = "Haswell"
_PINS = {"OPENBLAS_CORETYPE": REFERENCE_KERNEL, "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def _cpuinfo(field: str) -> str:
    """The first value of `field` in /proc/cpuinfo ('' where there is none, e.g. macOS)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith(field):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    return set(_cpuinfo("flags").split())


def _cpu_vendor() -> str:
    """The CPU's vendor_id ('GenuineIntel', 'AuthenticAMD'; '' where there is none)."""
    return _cpuinfo("vendor_id")


def mkl_runs_strict_avx2() -> bool:
    """Whether MKL takes its strict AVX2 branch in processes started from here: an Intel CPU with AVX2 and
    FMA, and `MKL_CBWR` asking for it (the pin, unless the user set another value). Training-free scores
    computed then equal the shipped ones bit for bit (measured; see the module's docstring)."""
    value = os.environ.get("MKL_CBWR", _PINS["MKL_CBWR"] if can_pin() else "")
    parts = {part.strip().upper().removeprefix("BRANCH=") for part in value.split(",")}
    return can_pin() and _cpu_vendor() == "GenuineIntel" and parts == {"AVX2", "STRICT"}


def numpy_avx512_features(version: str | None = None) -> str | None:
    """The value of `NPY_DISABLE_CPU_FEATURES` that switches off every AVX-512 code path of numpy
    `version` (default: the installed one, read without importing it), or None where numpy is not
    installed. Each numpy names its paths in its own way (an unknown name is an ImportWarning): 2.4 and
    later X86_V4, AVX512_ICL and AVX512_SPR; before it one name per AVX-512 level, AVX512_SPR from 2.3.
    Naming a path this CPU lacks is allowed (numpy ignores it)."""
    if version is None:
        version = _installed_numpy_version()
        if version is None:
            return None
    major_minor = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if major_minor >= (2, 4):
        return "X86_V4 AVX512_ICL AVX512_SPR"
    levels = "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
    return levels + " AVX512_SPR" if major_minor >= (2, 3) else levels


def _installed_numpy_version() -> str | None:
    """numpy's version from its `version.py`, without importing numpy (importlib.metadata would cost
    about 0.1 s on every command's start)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("numpy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    try:
        text = (Path(spec.origin).parent / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"""^(?:full_)?version\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", text, re.MULTILINE)
    return found.group(1) if found else None


def can_pin() -> bool:
    """Whether this CPU runs the reference kernels: x86-64 with AVX2 and FMA (Linux)."""
    return platform.machine().lower() in ("x86_64", "amd64") and {"avx2", "fma"} <= _cpu_flags()


def pinned_variables() -> dict[str, str]:
    """The environment variables that ask for the reference kernels and numpy's AVX2 paths (none where
    the CPU cannot run them). A process reads them when it loads the libraries: `pin()` sets them for this
    one, the Dask nanny (`nasbench_cli.harness.dask_nanny`) for the worker processes it spawns."""
    if not can_pin():
        return {}
    pins = dict(_PINS)
    if (features := numpy_avx512_features()) is not None:
        pins["NPY_DISABLE_CPU_FEATURES"] = features
    return pins


def pin() -> None:
    """Ask for the reference kernels and numpy's AVX2 paths, unless the user chose otherwise; without
    effect where the CPU cannot run them or numpy is already loaded (`kernel_note` then says so)."""
    if "numpy" not in sys.modules:
        for name, value in pinned_variables().items():
            os.environ.setdefault(name, value)


def active_kernel() -> str | None:
    """The kernel set OpenBLAS uses in this process (e.g. 'Haswell', 'SkylakeX'), or None before numpy
    is imported or where OpenBLAS is not numpy's BLAS."""
    if "numpy" not in sys.modules:
        return None
    from threadpoolctl import threadpool_info

    kernels = [pool.get("architecture") for pool in threadpool_info() if pool.get("internal_api") == "openblas"]
    return kernels[0] if kernels else None


def numpy_uses_avx512() -> bool | None:
    """Whether numpy runs any of its AVX-512 code paths in this process (None before numpy is imported)."""
    if "numpy" not in sys.modules:
        return None
    import numpy

    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:                      # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return any(__cpu_features__.get(name) for name in numpy_avx512_features(numpy.__version__).split())


def kernel_note() -> str | None:
    """One line when OpenBLAS does not use the reference kernels in this process, numpy runs its AVX-512
    code paths, or MKL (torch's) is not asked for its strict AVX2 branch on an Intel CPU, else None."""
    kernel = active_kernel()
    avx512 = numpy_uses_avx512()
    if (kernel is None or kernel == REFERENCE_KERNEL) and not avx512:
        return _mkl_note()
    chosen = os.environ.get("OPENBLAS_CORETYPE", "")
    if kernel is not None and kernel != REFERENCE_KERNEL:
        why = ("this CPU cannot run them" if not can_pin()
               else f"OPENBLAS_CORETYPE is set to {chosen!r}" if chosen and chosen.lower() != REFERENCE_KERNEL.lower()
               else "numpy was imported before nasbench")
        return (f"OpenBLAS uses its {kernel} kernels here, not the {REFERENCE_KERNEL} ones the shipped scores "
                f"and reference runs were made with ({why}): training-free scores and graph2vec features "
                f"built here may differ from theirs in the last digits")
    chosen = os.environ.get("NPY_DISABLE_CPU_FEATURES")
    why = (f"NPY_DISABLE_CPU_FEATURES is set to {chosen!r}" if chosen is not None
           else "numpy was imported before nasbench")
    return (f"numpy runs its AVX-512 code paths here, not the AVX2 ones nasbench pins ({why}): its exp and log "
            f"can differ from other CPUs' in the last bit, and a search that reads them (optuna, motpe, smac, "
            f"hypertune) may take other steps")


def _mkl_note() -> str | None:
    """One line when MKL, on an Intel CPU where the strict AVX2 branch works, is asked for another (or for
    none: numpy was imported before nasbench), else None. Elsewhere MKL takes its AUTO branch anyway."""
    chosen = os.environ.get("MKL_CBWR")     # unset: pin() did not run (numpy came first), MKL's AUTO branch
    if not can_pin() or _cpu_vendor() != "GenuineIntel" or (chosen is not None and mkl_runs_strict_avx2()):
        return None
    why = f"MKL_CBWR is set to {chosen!r}" if chosen is not None else "numpy was imported before nasbench"
    return (f"torch's MKL does not run its strict AVX2 branch here ({why}; nasbench pins MKL_CBWR="
            f"{_PINS['MKL_CBWR']}): training-free scores computed here may differ from the shipped ones in the "
            f"last digits, and dpl, dyhpo and ftpfn may take other steps")
