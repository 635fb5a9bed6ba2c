"""One `nasbench run` at a time per results folder and benchmark.

`OUT/<benchmark>/.nasbench-run.lock` is locked (fcntl.flock, exclusive) for the whole run. The kernel
releases the lock when the process ends, however it ends (Ctrl-C, SIGTERM, kill -9), so the lock of a
killed run never stands in the way: a stale lock is recognised by construction. The file holds the
owner's pid, for the message another run gets. Only the lock holder deletes temp files, so a run never
deletes a temp file that a live run is writing.
"""
import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from benchmarks.core.errors import UserError

LOCK_NAME = ".nasbench-run.lock"


@contextmanager
def run_lock(out, benchmark: str):
    """Hold the results folder `out/benchmark` for this process; UserError (one line) if another live
    process holds it or the folder cannot be written."""
    folder = Path(out) / benchmark
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if (folder / LOCK_NAME).is_symlink():
            raise UserError(f"{folder / LOCK_NAME} is a symbolic link; nasbench never writes through one: "
                            "remove it")
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)   # no link followed
        handle = os.fdopen(fd, "a+", encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write to the results folder {folder}: {exc.strerror or exc}; "
                        "pass a writable --out") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "unknown"
            raise UserError(f"another `nasbench run` (pid {owner}) is writing to {folder}; wait for it to "
                            "finish or pass another --out") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield folder
    finally:
        handle.close()


def lock_holders(root) -> list[tuple[Path, str]]:
    """(results folder, pid) of every `nasbench run` holding `root` (one benchmark's folder) or a benchmark
    folder under it now (a lock file nobody holds is a finished or killed run's, and is not listed). Reads
    only: creates nothing."""
    holders = []
    for lock in [Path(root) / LOCK_NAME] + sorted(Path(root).glob(f"*/{LOCK_NAME}")):
        try:
            fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        with os.fdopen(fd, encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                holders.append((lock.parent, handle.read().strip() or "unknown"))
            except OSError:
                continue
    return holders
