"""syne-tune's schedulers on the simulator (issue 48, item 1): each runs on the real tables, the same seed
gives the same result, multi-fidelity schedulers decide after every epoch and never see a stopped trial
again, and a missing library is one line naming what to install."""
import importlib.util
import json
import sys

import numpy as np
import pytest

import cli_process

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("syne_tune") is None, reason="syne-tune is not installed")

from benchmarks.core.errors import UserError  # noqa: E402
from nasbench_cli.harness.trial import run_algorithm  # noqa: E402
from no_test_table import NoTestTable  # noqa: E402
from optimizers.registry import SYNETUNE_ALGORITHMS, make_algorithm  # noqa: E402

SINGLE_OBJECTIVE = [a for a in SYNETUNE_ALGORITHMS if a not in ("st-moasha", "st-mo-rea")]


def run(benchmark, algo, seed, hours, workers=1, **kwargs):
    from benchmarks.core.features import features

    algorithm = make_algorithm(algo, None, benchmark.name)
    feats = features(benchmark, algorithm.feature_kind)
    return run_algorithm(NoTestTable(benchmark.search), algo, seed, hours * 3600.0, feats, None, workers=workers,
                         **kwargs)


# simulated hours on wt2 (a full training takes 4-6 h there; BORE refits a model at every suggestion)
HOURS = {"st-rs": 30, "st-kde": 30, "st-rea": 30, "st-bore": 20, "st-asha": 8, "st-bohb": 8, "st-asha-bore": 4}


@pytest.mark.parametrize("algo", list(HOURS))
def test_each_scheduler_runs_on_wt2_and_repeats_itself(wt2, algo):
    """Four workers, the same seed twice: the same jobs at the same simulated times."""
    hours = HOURS[algo]
    a = run(wt2, algo, 3, hours, workers=4)
    b = run(wt2, algo, 3, hours, workers=4)
    h, g = a.history, b.history
    assert list(h.arch) == list(g.arch) and list(h.epochs) == list(g.epochs) and list(h.time_s) == list(g.time_s)
    assert len(h.arch) >= 4
    first_of = {}
    for arch, start, reached in zip(h.arch, h.from_epoch, h.epochs):
        first_of.setdefault(arch, start)
        assert first_of[arch] == 0                          # each configuration is its own architecture
    if algo in ("st-asha", "st-bohb", "st-asha-bore"):
        assert {e - f for e, f in zip(h.epochs, h.from_epoch)} == {1}      # one result per epoch
    else:
        assert set(h.from_epoch) == {0} and len(set(h.arch)) == len(h.arch)   # one full evaluation each


def test_asha_stops_trials_at_its_rungs_and_never_resumes_them(wt2):
    """syne-tune's ASHA (grace 1, eta 3, max 50): a trial stops right after a rung (1, 3, 9, 27 epochs), at
    50, where its log ends, or because the budget ran out while it trained (its worker's last job); a
    trial that stopped never trains again."""
    env = run(wt2, "st-asha", 0, 40, workers=2)
    h = env.history
    reached, last_job = {}, {}
    for k, (arch, start, end, worker) in enumerate(zip(h.arch, h.from_epoch, h.epochs, h.worker)):
        assert reached.get(arch, 0) == start               # continues exactly where it stopped
        reached[arch] = end
        last_job[worker] = arch
    log_end = {a: int(wt2.search.n_epochs[a]) for a in reached}
    odd = [a for a, r in reached.items() if r not in (1, 3, 9, 27, 50) and r != log_end[a]]
    assert set(odd) <= set(last_job.values()), (odd, last_job)
    assert 50 in reached.values() and list(reached.values()).count(1) > len(reached) / 2


def test_the_global_random_generator_is_restored(wt2):
    np.random.seed(123)
    expected = np.random.random()
    np.random.seed(123)
    run(wt2, "st-asha", 0, 4)
    assert np.random.random() == expected


def test_multi_objective_schedulers_search_a_front_on_ptb(tmp_path):
    out = tmp_path / "r"
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--algo", "st-moasha,st-mo-rea", "--objectives",
               "logppl,params", "--trials", "1", "--budget-hours", "15", "--json", "--out", str(out)]
    done = cli_process.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr                     # syne-tune's per-trial warnings are silenced
    for label in ("st-moasha", "st-mo-rea"):
        record = json.loads((out / "ptb" / label / "trial-0.json").read_text())
        assert record["objectives"] == ["logppl", "params"] and record["front"]
    refused = cli_process.run(command[:6] + ["--trials", "1", "--out", str(tmp_path / "x")], capture_output=True,
                             text=True)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1


def test_single_fidelity_schedulers_search_native_spaces_and_multi_fidelity_ones_need_epochs():
    assert make_algorithm("st-bore", None, "nmt-en-ja").settings.features == "nmt-encoding"
    assert make_algorithm("st-kde", None, "ptb").settings.features == "shipped-10d"
    assert make_algorithm("st-asha", None, "lora-zh-en").settings.max_epochs == 28
    with pytest.raises(UserError, match="needs epochs"):
        make_algorithm("st-asha", None, "nmt-en-ja")


def test_a_missing_library_is_one_line_naming_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "syne_tune" else real(name, *a))
    with pytest.raises(UserError) as error:
        make_algorithm("st-asha", None, "ptb")
    message = str(error.value)
    assert "\n" not in message and "nasbench[synetune]" in message and "syne-tune==0.16.0" in message


def test_runs_on_the_fine_tuning_curves_with_a_checkpoint_budget(tmp_path):
    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "lora-zh-en", "--algo",
               "st-asha,st-bohb", "--trials", "1", "--budget-evals", "40", "--json", "--out", str(tmp_path)]
    done = cli_process.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr                    # statsmodels' FutureWarning on its generator
    for label in ("st-asha", "st-bohb"):
        record = json.loads((tmp_path / "lora-zh-en" / label / "trial-0.json").read_text())
        assert record["final_regret"] is not None and record["settings"]["max_epochs"] == 28


def test_synetune_names_map_to_the_registry_and_removed_schedulers_are_one_line():
    from optimizers.registry import parse_algo_list

    from optimizers.registry import synetune_substitutions

    assert parse_algo_list("synetune:BORE,synetune:asha,synetune:RandomSearch", "ptb") == ["st-bore", "st-asha", "st-rs"]
    # the Gaussian-process schedulers syne-tune removed (0.14) run as nasbench's own, under their own names, with a note
    removed = "synetune:dyhpo,synetune:HyperTune,synetune:mobster"
    assert parse_algo_list(removed, "ptb") == ["dyhpo", "hypertune", "mobster"]
    notes = synetune_substitutions(removed + ",synetune:bore,hb")
    assert len(notes) == 3 and all("removed from syne-tune" in n and "written from the paper" in n for n in notes)
    for name, says in (("synetune:ehvi", "botorch"), ("synetune:cqr", "huggingface_hub"), ("synetune:foo", "choose from")):
        with pytest.raises(UserError) as error:
            parse_algo_list(name, "ptb")
        assert says in str(error.value) and "\n" not in str(error.value)


def test_bores_root_logger_warning_is_silenced_and_the_filter_removed(tmp_path, wt2):
    """syne-tune's BORE warns through the root logger when every result so far is equal (on ptb, seed 1 of
    ASHA-BORE does so within 5 simulated hours); the run's output stays ours, and the filter goes with the
    trial."""
    import logging

    command = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "ptb", "--algo", "st-asha-bore",
               "--seed", "1", "--trials", "1", "--budget-hours", "5", "--jobs", "1", "--out", str(tmp_path)]
    done = cli_process.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Assigned all samples" not in done.stderr and "WARNING" not in done.stderr, done.stderr
    record = json.loads((tmp_path / "ptb" / "st-asha-bore" / "trial-0.json").read_text())
    assert record["final_regret"] is not None

    from optimizers.libraries.synetune_search import LibraryWarnings

    quiet = LibraryWarnings()
    library = logging.LogRecord("root", logging.WARNING, quiet._package + "x.py", 1, "m", None, None)
    ours = logging.LogRecord("root", logging.WARNING, "/elsewhere/x.py", 1, "m", None, None)
    severe = logging.LogRecord("root", logging.ERROR, quiet._package + "x.py", 1, "m", None, None)
    assert [quiet.filter(r) for r in (library, ours, severe)] == [False, True, True]
    before = list(logging.getLogger().filters)
    run(wt2, "st-asha-bore", 0, 2)
    assert logging.getLogger().filters == before
