"""One run description: `nasbench run` and `nasbench.run` each create one frozen `RunDescription`, checked
once, and it is the only thing handed down to the trials (each `TrialSpec` carries it)."""
import dataclasses
import math
import pickle

import pytest

from benchmarks.core.errors import UserError
from nasbench_cli.harness.run_description import RunDescription, describe_run


def test_a_description_is_frozen_picklable_and_makes_its_trials(tmp_path):
    run = describe_run("hb,rs10e", "ptb", trials=3, seed=7, budget_hours=20, workers=2, set_items=["hb.eta=4"],
                       objectives="logppl,params", constraints=["params<=6e6"], out=tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.trials = 5
    assert pickle.loads(pickle.dumps(run)) == run
    assert run.algos == ("hb", "rs10e") and run.budget == 20 and run.budget_s == 20 * 3600.0
    assert run.objectives == ("logppl", "params") and run.constraints == ("params<=6000000.0",)
    assert run.overrides_of("hb") == {"eta": "4"} and run.overrides_of("rs10e") == {}
    spec = run.trial("hb", 2)
    assert spec.run is run and spec.seed == 9 and spec.workers == 2 and spec.label == "hb+eta-4@2w"
    assert spec.path == tmp_path / "ptb" / "hb+eta-4@2w" / "trial-2.json"
    assert spec.settings_hash == run.settings_hash_of("hb") != run.settings_hash_of("rs10e")


@pytest.mark.parametrize("kwargs, says", [
    ({"trials": 0}, "trials >= 1"),
    ({"workers": 0}, "workers >= 1"),
    ({"seed": -1}, "seed"),
    ({"budget_hours": math.nan}, "finite budget_hours"),
    ({"budget_hours": 10, "budget_evals": 5}, "give --budget-hours"),
    ({"label": "two"}, "--label names one run"),
    ({"label": "bad/label"}, None),
    ({"objectives": ""}, "names no objective"),
    ({"constraints": [","]}, "states no constraint"),
])
def test_every_value_is_checked_once_when_the_description_is_made(kwargs, says):
    algos = "hb" if "label" in kwargs and kwargs["label"] == "bad/label" else "hb,rs10e"
    with pytest.raises(UserError, match=says):
        describe_run(algos, "ptb", **kwargs)


def test_the_command_hands_only_its_description_down_to_the_trials(tmp_path, monkeypatch):
    """`nasbench run` in-process with the runner replaced: every trial it hands over carries the one
    description the command made, equal to what describe_run gives for the same options."""
    from click.testing import CliRunner

    from nasbench_cli.commands.run import run as run_command
    from nasbench_cli.harness import runner

    handed = []
    monkeypatch.setattr(runner, "execute", lambda specs, jobs, on_done=None, on_progress=None:
                        (handed.extend(specs), ([], []))[1])
    result = CliRunner().invoke(run_command, ["--algo", "hb,re", "--trials", "2", "--budget-hours", "30",
                                              "--workers", "4", "--jobs", "1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert len(handed) == 4 and len({id(spec.run) for spec in handed}) == 1
    made = handed[0].run
    assert isinstance(made, RunDescription)
    assert made == describe_run("hb,re", "ptb", trials=2, budget_hours=30, workers=4, jobs=1, out=tmp_path)
    assert [(s.algo, s.trial) for s in handed] == [("hb", 0), ("hb", 1), ("re", 0), ("re", 1)]


def test_the_python_api_makes_the_same_kind_of_description(monkeypatch):
    import nasbench
    from nasbench_cli import api

    seen = []
    monkeypatch.setattr(api, "_run_trials", lambda run, *rest: seen.append(run) or [])
    nasbench.run("hb", "ptb", trials=3, budget_hours=10, seed=4)
    assert len(seen) == 1 and isinstance(seen[0], RunDescription)
    assert (seen[0].algos, seen[0].trials, seen[0].seed, seen[0].budget_s) == (("hb",), 3, 4, 36000.0)
    with pytest.raises(UserError, match="trials >= 1"):
        nasbench.run("hb", "ptb", trials=0)
