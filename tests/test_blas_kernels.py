"""nasbench pins OpenBLAS's kernels to the reference ones (Haswell) on x86-64 CPUs with AVX2, so the
shipped scores and recorded trajectories reproduce on every such CPU type (an AVX-512 CPU otherwise
picks its SkylakeX kernels, which sum in another order), and switches numpy's AVX-512 code paths off
(with them, exp and log differ in the last bit, and Optuna's TPE takes other steps)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.core import blas_kernels

ROOT = Path(__file__).resolve().parent.parent
needs_avx2 = pytest.mark.skipif(not blas_kernels.can_pin(), reason="not an x86-64 CPU with AVX2 and FMA")
needs_avx512 = pytest.mark.skipif(not (blas_kernels.can_pin() and "avx512f" in blas_kernels._cpu_flags()),
                                  reason="not an x86-64 CPU with AVX-512: numpy has no other paths to switch off")
PINNED = ("OPENBLAS_CORETYPE", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "NPY_DISABLE_CPU_FEATURES")


def python(code: str, **env_changes) -> str:
    """stdout of `code` in a fresh interpreter at the repository root, with the pinned variables unset
    unless given."""
    env = {k: v for k, v in os.environ.items() if k not in PINNED}
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


NUMPY_PATHS = "from benchmarks.core.blas_kernels import numpy_uses_avx512, kernel_note; print(numpy_uses_avx512()); print(kernel_note())"


@needs_avx2
def test_importing_nasbench_first_switches_numpy_avx512_paths_off_with_names_this_numpy_knows():
    # -W error: a name the installed numpy does not dispatch would be an ImportWarning, here an error
    done = subprocess.run([sys.executable, "-W", "error", "-c", "import benchmarks, numpy; " + NUMPY_PATHS],
                          cwd=ROOT, env={k: v for k, v in os.environ.items() if k not in PINNED},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "None"]
    import numpy

    assert os.environ["NPY_DISABLE_CPU_FEATURES"] == blas_kernels.numpy_avx512_features(numpy.__version__)


@needs_avx512
def test_numpy_imported_first_or_a_users_own_choice_is_kept_and_said_in_one_line():
    first, note = python("import numpy, benchmarks; " + NUMPY_PATHS).splitlines()
    assert first == "True" and note.startswith("OpenBLAS uses its")     # the BLAS line comes first
    chosen, note = python("import benchmarks, numpy; " + NUMPY_PATHS, NPY_DISABLE_CPU_FEATURES="").splitlines()
    assert chosen == "True"
    assert note.startswith("numpy runs its AVX-512 code paths here") and "is set to ''" in note


def test_each_numpy_generation_gets_the_names_it_dispatches():
    """The dispatch lists of numpy 1.26, 2.0-2.2, 2.3 and 2.4 (`numpy._core._multiarray_umath.__cpu_dispatch__`
    of each wheel): every AVX-512 name of each, and no name it would not know."""
    assert blas_kernels.numpy_avx512_features("1.26.4").split() == [
        "AVX512F", "AVX512CD", "AVX512_KNL", "AVX512_KNM", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL"]
    assert blas_kernels.numpy_avx512_features("2.2.6") == blas_kernels.numpy_avx512_features("1.26.4")
    assert blas_kernels.numpy_avx512_features("2.3.5").split()[-1] == "AVX512_SPR"
    assert blas_kernels.numpy_avx512_features("2.4.6") == "X86_V4 AVX512_ICL AVX512_SPR"
    assert blas_kernels.numpy_avx512_features("2.5.0rc1") == "X86_V4 AVX512_ICL AVX512_SPR"
    import numpy

    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__
    except ImportError:
        from numpy.core._multiarray_umath import __cpu_dispatch__
    assert set(blas_kernels.numpy_avx512_features().split()) <= set(__cpu_dispatch__)
    assert blas_kernels._installed_numpy_version() == numpy.__version__


@needs_avx512
def test_trial_processes_run_numpys_avx2_paths_so_optuna_takes_the_steps_it_takes_without_avx512(tmp_path):
    """Optuna on bert, seed 14: with numpy's AVX-512 paths on (the user's empty NPY_DISABLE_CPU_FEATURES
    is kept) it ends at another regret than nasbench's default, which is what an AVX2-only CPU computes
    (measured: 30 trials on bert, 11 differ; seed 14's 0.42 against 1.04)."""
    pytest.importorskip("optuna")

    def final_regret(out, **env_changes):
        env = {k: v for k, v in os.environ.items() if k not in PINNED}
        env.update(env_changes)
        command = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "bert", "--algo", "optuna",
                   "--trials", "1", "--seed", "14", "--jobs", "1", "--out", str(tmp_path / out), "--json"]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        trial = json.loads((tmp_path / out / "bert" / "optuna" / "trial-0.json").read_text())
        return trial["final_regret"], trial["jobs"]

    pinned = final_regret("pinned")
    avx512 = final_regret("avx512", NPY_DISABLE_CPU_FEATURES="")
    assert pinned[1] != avx512[1]


def test_the_dask_nanny_pins_the_worker_processes_it_spawns(monkeypatch):
    """`distributed` imports numpy before a preload runs, so the nanny sets the variables for the worker
    process it spawns (as it sets PYTHONHASHSEED); a value in the nanny's own environment is kept."""
    from nasbench_cli.harness import dask_nanny

    class Nanny:                 # what dask_setup reads of distributed's Nanny
        def __init__(self):
            self.pre_spawn_env, self.env, self.config = {"PYTHONHASHSEED": "6640"}, {}, {}

    for name in PINNED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    nanny = Nanny()
    dask_nanny.dask_setup(nanny)
    expected = {k: v for k, v in blas_kernels.pinned_variables().items() if k != "MKL_CBWR"}
    assert {k: v for k, v in nanny.pre_spawn_env.items() if k in PINNED} == expected
    assert nanny.pre_spawn_env["PYTHONHASHSEED"] == dask_nanny.HASH_SEED_OFF
    if blas_kernels.can_pin():
        assert expected["OPENBLAS_CORETYPE"] == "Haswell" and "NPY_DISABLE_CPU_FEATURES" in expected


@needs_avx512
def test_the_python_api_warns_when_numpy_was_loaded_first_and_runs_its_avx512_paths(tmp_path):
    """`nasbench.run` runs in the caller's process: in a notebook that imported numpy first, neither pin
    can apply, and its results may differ from `nasbench run`'s; it says so (a warning, not an error)."""
    code = ("import warnings, numpy, nasbench\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    nasbench.run('rs', benchmark='bert', trials=1)\n"
            "print([str(w.message) for w in caught])")
    first = python(code)
    assert "numpy was imported before nasbench" in first
    pinned = python(code.replace("import warnings, numpy, nasbench", "import warnings, nasbench, numpy"))
    assert pinned == "[]"


@needs_avx2
def test_another_mkl_branch_on_an_intel_cpu_is_said_in_one_line():
    """On an Intel CPU MKL follows MKL_CBWR; only its strict AVX2 branch gives the shipped scores bit for bit
    there (tests/test_out_of_the_box.py), so another choice is said in one line. Elsewhere MKL takes its AUTO
    branch whatever MKL_CBWR says, and there is nothing to say."""
    pinned = python("import benchmarks, numpy, os; print(os.environ['MKL_CBWR']); " + KERNEL).splitlines()
    assert pinned == ["AVX2,STRICT", "Haswell", "None"]
    chosen = python("import benchmarks, numpy; " + KERNEL, MKL_CBWR="AVX2").splitlines()
    if blas_kernels._cpu_vendor() == "GenuineIntel":
        assert chosen[1].startswith("torch's MKL does not run its strict AVX2 branch here (MKL_CBWR is set to 'AVX2'")
        assert python("import benchmarks; from benchmarks.core.blas_kernels import mkl_runs_strict_avx2; "
                      "print(mkl_runs_strict_avx2())").strip() == "True"
    else:
        assert chosen[1] == "None"
    assert python("import benchmarks; from benchmarks.core.blas_kernels import mkl_runs_strict_avx2; "
                  "print(mkl_runs_strict_avx2())", MKL_CBWR="AVX2").strip() == "False"
