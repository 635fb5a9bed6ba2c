"""DyHPO (issue 48: syne-tune 0.16 no longer ships it, so it is written from the paper): its deep-kernel GP
learns next-epoch validation losses from configuration, budget and curve, and the search runs freeze-thaw
one epoch a step, the same seed the same result."""
import importlib.util
import json
import sys

import numpy as np
import pytest

import cli_process

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

from benchmarks.core.features import features  # noqa: E402
from optimizers.base import SearchInputs  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402


def test_the_deep_kernel_gp_predicts_the_next_epoch_of_held_out_curves(wt2):
    """Fit on 150 WikiText-2 cells, each trained to a random epoch; predict the next epoch of 50 held-out
    cells from their curves (measured: mean error 0.051 log-perplexity; a constant, the training mean,
    0.555; the last observed value itself 0.035 — the GP's prior mean, which it does not beat here)."""
    from nasbench_cli.harness.simulator import searcher_view

    search = wt2.search
    complete = np.flatnonzero(np.isfinite(search.val_loss).all(axis=1))
    rng = np.random.default_rng(0)
    rng.shuffle(complete)
    train, held = complete[:150], complete[150:200]
    algorithm = make_algorithm("dyhpo", None, "wt2")
    algorithm.start(SearchInputs(searcher_view(search), np.random.default_rng(1), 1, features(wt2, "cell-encoding")))
    for row in train:
        epochs = int(rng.integers(1, 51))
        algorithm._curves[row, :epochs] = search.val_loss[row, :epochs]
        algorithm._trained[row] = epochs
    algorithm._results = len(train)
    algorithm._fit()
    seen = rng.integers(1, 50, size=len(held))
    for row, epochs in zip(held, seen):
        algorithm._curves[row, :epochs] = search.val_loss[row, :epochs]
    truth = search.val_loss[held, seen]                       # the epoch after the last one seen
    mean, std = algorithm.predict(held, seen + 1)
    model_error = np.abs(mean - truth).mean()
    constant_error = np.abs(algorithm._mean - truth).mean()
    assert model_error < constant_error / 5, (model_error, constant_error)
    assert (std > 0).all() and np.isfinite(mean).all()


def test_dyhpo_runs_as_freeze_thaw_and_repeats_itself(tmp_path):
    """The same seed, the same trajectory: in a run's worker process and again in this one (another hash seed,
    other thread settings)."""
    from nasbench_cli.harness.trial import run_trial

    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "lora-zh-en", "--algo", "dyhpo",
               "--trials", "1", "--budget-evals", "30", "--set", "dyhpo.fit_steps=100", "--json"]
    first = cli_process.run(command + ["--out", str(tmp_path / "a")], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    a = json.loads(next((tmp_path / "a").rglob("trial-0.json")).read_text())
    assert a["trajectory"] == run_trial("lora-zh-en", "dyhpo", 0, 0, 30, overrides={"fit_steps": "100"})["trajectory"]
    steps = [e - f for e, f in zip(a["trajectory"]["epochs"], a["jobs"]["from_epoch"])]
    assert set(steps) <= {0, 1} and steps.count(1) > len(steps) / 2       # one checkpoint a step
    assert len(set(a["trajectory"]["arch"])) < len(steps)                  # some architectures were thawed again
