"""How many processes a command starts when it is not told (`--jobs`, `--scheduler local`).

`$NASBENCH_JOBS` when set (a CI job, a shared machine, a test suite that runs commands side by side), else
the cores this process may run on (its CPU affinity, which a container or `taskset` may narrow: not
`os.cpu_count()`, the machine's). It never changes a result: trials are the same whatever runs them.
"""
import os

from benchmarks.core.errors import UserError

JOBS_VARIABLE = "NASBENCH_JOBS"


def available_cores() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):          # no affinity on macOS and Windows
        return os.cpu_count() or 1


def default_jobs() -> int:
    """Processes to start when none were asked for: `$NASBENCH_JOBS` (a positive integer), else
    `available_cores()`; UserError naming the variable if it holds anything else."""
    text = os.environ.get(JOBS_VARIABLE, "").strip()
    if not text:
        return available_cores()
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{JOBS_VARIABLE}={text!r}: expected a positive whole number of processes "
                        f"(or unset it to use the {available_cores()} cores here)")
    return int(text)
