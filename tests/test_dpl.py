"""DPL (issue 48): its power-law ensemble extrapolates held-out curves better than their last observed
value, and the algorithm runs as a freeze-thaw search on the real tables, the same seed the same result."""
import importlib.util
import json
import sys

import numpy as np
import pytest

import cli_process

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")

from benchmarks.core.features import features  # noqa: E402
from optimizers.base import SearchInputs  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402


@pytest.fixture(scope="module")
def fitted_on_wt2(wt2):
    """DPL (two networks: the test's CPU halved) fit on 100 complete WikiText-2 curves plus the first 10
    epochs of 60 held-out cells: (algorithm, search, held-out rows)."""
    from nasbench_cli.harness.simulator import searcher_view

    search = wt2.search
    complete = np.flatnonzero(np.isfinite(search.val_loss).all(axis=1))
    rng = np.random.default_rng(0)
    rng.shuffle(complete)
    train, held = complete[:100], complete[100:160]
    algorithm = make_algorithm("dpl", {"ensemble": "2"}, "wt2")
    algorithm.start(SearchInputs(searcher_view(search), np.random.default_rng(1), 1, features(wt2, "cell-encoding")))
    algorithm._data = [(int(r), e + 1, float(search.val_loss[r, e])) for r in train for e in range(50)] + \
                      [(int(r), e + 1, float(search.val_loss[r, e])) for r in held for e in range(10)]
    algorithm._fit()
    return algorithm, search, held


def test_the_power_law_ensemble_extrapolates_better_than_the_last_observed_value(fitted_on_wt2):
    """The held-out cells' validation loss at epoch 50, predicted from their first 10 epochs (measured: mean
    error 0.10 against 0.23 for the value at epoch 10)."""
    algorithm, search, held = fitted_on_wt2
    predicted, _ = algorithm.predict_final(held)
    truth = search.val_loss[held, 49]
    model_error = np.abs(predicted - truth).mean()
    last_value_error = np.abs(search.val_loss[held, 9] - truth).mean()
    assert model_error < last_value_error, (model_error, last_value_error)


def test_predictions_read_from_the_fit_agree_with_those_of_the_candidates_alone(fitted_on_wt2):
    """The asks between two fits read every row's prediction, computed once (a trial's CPU about halved on
    ptb). Each candidate set's own batch gives the same numbers up to the last float32 bits of the networks'
    output: bit for bit on the AMD EPYC (no AVX-512) where this was made; on an Intel Xeon with AVX-512
    the matrix product works in blocks of six rows and a batch's last rows take another kernel, so a row's
    prediction can move by a few float32 units in the last place (measured: at most 2.0e-7 in the mean,
    1.4e-7 in the spread, for values of 5-7 log-perplexity and an output scale of 0.6). The tolerance is
    eight such units: float32's epsilon (1.2e-7) times 8 times the largest output magnitude times the scale.
    With MKL's strict AVX2 branch on an Intel CPU (the pin since 2026-12-03: `MKL_CBWR=AVX2,STRICT`) a row's
    result no longer depends on its place in the batch: bit for bit there (measured on a Xeon of model 167:
    6 of 6 sets exact, against up to 3.6e-8 apart with `MKL_CBWR=AVX2`), so that is asserted there.
    Small sets (under SHARED_MIN_ROWS) are computed alone, as they always were."""
    from benchmarks.core.blas_kernels import mkl_runs_strict_avx2

    import copy

    algorithm = copy.deepcopy(fitted_on_wt2[0])       # the module's model stays as the fixture made it
    search = fitted_on_wt2[1]
    rng = np.random.default_rng(2)
    for size in (1, 3, algorithm.SHARED_MIN_ROWS - 1):  # small sets: computed alone, nothing shared made
        algorithm.predict_final(np.sort(rng.choice(search.n, size, replace=False)))
        assert algorithm._every_row is None
    for size in (algorithm.SHARED_MIN_ROWS, 65, 100, 257, search.n - 3, search.n):
        rows = np.sort(rng.choice(search.n, size, replace=False))
        shared, alone = algorithm.predict_final(rows), algorithm._predict(rows)
        assert algorithm._every_row is not None
        assert len(shared[0]) == len(shared[1]) == size
        magnitude = np.abs(alone[0] - algorithm._mean).max() + alone[1].max()      # output units x scale
        ulps = 0.0 if mkl_runs_strict_avx2() else 8 * np.finfo(np.float32).eps * max(magnitude, algorithm._std)
        np.testing.assert_allclose(shared[0], alone[0], rtol=0, atol=ulps)
        np.testing.assert_allclose(shared[1], alone[1], rtol=0, atol=ulps)
    algorithm._fit()                                    # a refit forgets them
    assert algorithm._every_row is None


def test_dpl_runs_as_freeze_thaw_and_repeats_itself(tmp_path):
    """The same seed, the same trajectory: in a run's worker process and again in this one (another hash seed,
    other thread settings)."""
    from nasbench_cli.harness.trial import run_trial

    out = tmp_path / "r"
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "lora-zh-en", "--algo", "dpl",
               "--trials", "1", "--budget-evals", "24", "--set", "dpl.ensemble=2", "--json"]
    first = cli_process.run(command + ["--out", str(out)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    a = json.loads(next(out.rglob("trial-0.json")).read_text())
    assert a["trajectory"] == run_trial("lora-zh-en", "dpl", 0, 0, 24, overrides={"ensemble": "2"})["trajectory"]
    steps = [e - f for e, f in zip(a["trajectory"]["epochs"], a["jobs"]["from_epoch"])]
    assert set(steps) <= {0, 1} and steps.count(1) > len(steps) / 2   # a step is one checkpoint (0: past a curve's end)
    assert len(set(a["trajectory"]["arch"])) < len(steps)   # some architectures were thawed again
