"""`--budget release`: the release notebook's protocol, trials ended by a count of jobs, not by time."""

# `--budget release`: the release notebook's fixed evaluation counts (benchmarking_examples.ipynb: 100
# iterations per round, 5 rounds): RS-50E 100 architectures, RS-10E 500, BO and RE 130 (1.3 x 100),
# Hyperband one pass of its own brackets (hb-release). Jobs started, not simulated hours, end a trial.
RELEASE_JOBS = {"rs50e": 100, "rs10e": 500, "bo10d": 130, "bo50d": 130, "re": 130, "hb-release": None}
RELEASE_TRIALS = 5
RELEASE_BUDGET_HOURS = 100_000.0   # never binding: a release trial takes about 220 simulated hours


def release_budget(algos, trials: int | None, workers: int) -> tuple[dict, int, float]:
    """({algo: job cap or None}, trials, budget hours) for `--budget release` (`trials` None: the release's
    5); UserError for an algorithm the release's notebook does not run, or for simulated workers (it
    trains one architecture at a time)."""
    from benchmarks.core.errors import UserError

    others = [a for a in algos if a not in RELEASE_JOBS]
    if others:
        raise UserError(f"--budget release covers the release notebook's algorithms ({', '.join(RELEASE_JOBS)}), "
                        f"not {', '.join(others)}")
    if workers != 1:
        raise UserError("--budget release is the release's sequential protocol: use one worker")
    if trials is None:
        trials = RELEASE_TRIALS
    return {a: RELEASE_JOBS[a] for a in algos}, trials, RELEASE_BUDGET_HOURS
