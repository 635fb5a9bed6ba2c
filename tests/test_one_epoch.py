"""The one-epoch top-K baseline `top1e` on the real PTB table: each round trains `screen` new architectures
one epoch and continues the `keep` best by validation loss after that epoch to the full fidelity."""
import numpy as np
import pytest

from benchmarks.core.environment import Environment
from benchmarks.core.errors import UserError
from nasbench_cli.harness.simulator import run_on
from no_test_table import NoTestTable
from optimizers.registry import make_algorithm


@pytest.mark.parametrize("workers", [1, 4])
def test_each_round_continues_its_best_after_one_epoch(ptb, workers):
    env = Environment(NoTestTable(ptb.search), 300 * 3600.0)
    run_on(env, make_algorithm("top1e", None, "ptb"), 3, None, None, workers)
    history = env.history
    order = np.argsort(history.start_s, kind="stable")               # history is in end order; rounds by start
    jobs = [(history.arch[k], history.epochs[k], history.from_epoch[k]) for k in order]
    screened = [arch for arch, reached, start in jobs if start == 0]
    assert len(screened) == len(set(screened)) >= 54                  # no architecture drawn twice; 2+ rounds
    first_round = screened[:27]
    loss = ptb.search.val_loss[ptb.search.indices_of(ptb.search.ids[first_round]), 0]
    best = [first_round[k] for k in np.argsort(np.where(np.isfinite(loss), loss, np.inf), kind="stable")[:3]]
    continued = [arch for arch, reached, start in jobs if start == 1]
    assert set(continued[:3]) == set(best)                             # then continued to 50 epochs
    assert all(reached == min(50, int(ptb.search.n_epochs[arch])) for arch, reached, start in jobs if start == 1)


def test_it_takes_the_top_fidelity_from_the_table_and_refuses_what_has_none():
    assert make_algorithm("top1e", None, "lora-zh-en").settings.max_epochs == 28
    with pytest.raises(UserError, match="top1e cannot run on bert: it needs epochs"):
        make_algorithm("top1e", None, "bert")
    with pytest.raises(UserError, match="keep <= screen"):
        make_algorithm("top1e", {"keep": "30"}, "ptb")
