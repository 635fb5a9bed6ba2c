"""nasbench pins OpenBLAS's kernels to the reference ones (Haswell) on x86-64 CPUs with AVX2, so the
shipped scores and recorded trajectories reproduce on every such CPU type (an AVX-512 CPU otherwise
picks its SkylakeX kernels, which sum in another order)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.core import blas_kernels

ROOT = Path(__file__).resolve().parent.parent
needs_avx2 = pytest.mark.skipif(not blas_kernels.can_pin(), reason="not an x86-64 CPU with AVX2 and FMA")


def python(code: str, **env_changes) -> str:
    """stdout of `code` in a fresh interpreter at the repository root, with the BLAS variables unset
    unless given."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")}
    env.update(env_changes)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip()


KERNEL = "from benchmarks.core.blas_kernels import active_kernel, kernel_note; print(active_kernel()); print(kernel_note())"


@needs_avx2
def test_this_test_process_uses_the_reference_kernels():
    import numpy  # noqa: F401

    assert blas_kernels.active_kernel() == "Haswell"
    assert blas_kernels.kernel_note() is None


@needs_avx2
def test_importing_nasbench_first_pins_the_kernels_and_a_user_choice_is_kept():
    assert python("import benchmarks, numpy; " + KERNEL).splitlines() == ["Haswell", "None"]
    assert python("import nasbench, numpy; " + KERNEL).splitlines() == ["Haswell", "None"]
    chosen = python("import benchmarks, numpy; " + KERNEL, OPENBLAS_CORETYPE="Sandybridge").splitlines()
    assert chosen[0] == "Sandybridge" and "OPENBLAS_CORETYPE is set to 'Sandybridge'" in chosen[1]


@needs_avx2
def test_numpy_imported_before_nasbench_is_said_in_one_line_where_the_cpu_picks_other_kernels():
    natural = python("import numpy; from threadpoolctl import threadpool_info; "
                     "print([p['architecture'] for p in threadpool_info() if p.get('internal_api') == 'openblas'][0])")
    kernel, note = python("import numpy, benchmarks; " + KERNEL).splitlines()
    assert kernel == natural
    if natural == "Haswell":          # an AVX2-only CPU picks the reference kernels by itself
        assert note == "None"
    else:                             # e.g. SkylakeX on a CPU with AVX-512
        assert note.startswith(f"OpenBLAS uses its {natural} kernels here") and "numpy was imported before" in note


def test_the_cli_says_which_kernels_a_score_build_used(tmp_path):
    pytest.importorskip("torch")
    from session_cache import seeded_cache

    env = dict(os.environ, NASBENCH_CACHE=str(seeded_cache(tmp_path)))
    command = [sys.executable, "-m", "nasbench_cli.main", "proxies", "build", "--sample", "1",
               "--metric", "hidden_covariance_l1", "--json"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    import json

    summary = json.loads(done.stdout)
    if blas_kernels.can_pin():
        assert summary["blas_kernel"] == "Haswell"
    assert summary["already_cached"] == 1     # the first cell of the sample is shipped: nothing to score
