"""How far a running trial is, told across processes: the worker writes a tiny file, the parent reads it.

A trial run by `run_and_write` in a worker process reports (simulated seconds, budget seconds, jobs
finished) at most every `EVERY_S` wall seconds into the file the parent named; the parent polls the
files of its running trials to move its progress bar within long trials. The files live in a
temporary folder of the parent's (never in a results folder) and are removed with it.
"""
import os
import time
from contextlib import contextmanager
from pathlib import Path

EVERY_S = 0.5

_current = None     # the reporter of the trial this process is running, or None


class _Reporter:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.last = 0.0

    def __call__(self, clock_s: float, budget_s: float, jobs: int) -> None:
        now = time.monotonic()
        if now - self.last < EVERY_S:
            return
        self.last = now
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(f"{clock_s!r} {budget_s!r} {int(jobs)}")
            os.replace(tmp, self.path)
        except OSError:        # progress is a courtesy: never fail a trial over it
            pass


@contextmanager
def reporting_to(path):
    """While the block runs, `current()` reports into `path` (None: no reporting)."""
    global _current
    previous, _current = _current, (_Reporter(path) if path is not None else None)
    try:
        yield
    finally:
        _current = previous


def current():
    """The reporter of the trial running in this process: call it with (clock_s, budget_s, jobs); or None."""
    return _current


def read(path) -> tuple[float, int] | None:
    """(share of the budget simulated, jobs finished) from a progress file, or None if there is none yet."""
    try:
        clock, budget, jobs = Path(path).read_text().split()
        return min(1.0, float(clock) / float(budget)) if float(budget) > 0 else 0.0, int(jobs)
    except (OSError, ValueError):
        return None
