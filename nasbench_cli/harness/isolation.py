"""`nasbench run --isolate`: run an algorithm in its own process, with only ask/tell messages crossing.

In-process code can walk stack frames and `gc.get_objects()` to the harness's table of recorded curves.
An isolated algorithm runs in a child interpreter (started fresh, not forked, so it inherits no memory)
that is handed what `start` receives (the searcher's `ArchitectureTable`, features, scores, the seeded
generator) and, per job, the observation of that job; nothing else of the benchmark ever reaches it.
The child's environment has no `NASBENCH_*` variables. What isolation does not stop: code that reads the
data files from disk itself. For that, `NASBENCH_ISOLATE_WRAPPER` starts the child under a command, e.g.
`setpriv --reuid=nobody --regid=nogroup --clear-groups` (util-linux; needs root) or `sudo -u untrusted`,
so that it runs as a user who cannot read the data or this process at all.

Messages are pickled over the child's stdin/stdout (so this works inside Dask's daemonic workers, which
may not use multiprocessing). Trajectories are identical with and without isolation: the child gets
the same inputs and observations in the same order.
"""
import os
import pickle
import struct
import subprocess
import sys

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job

_HEADER = struct.Struct("!Q")


PR_SET_DUMPABLE = 4


def not_dumpable() -> bool:
    """Mark this process (the worker that holds the benchmark's table) non-dumpable, so that processes
    of the same user without CAP_SYS_PTRACE, the isolated child included, can no longer read its memory
    (`/proc/<pid>/mem`), environment, open files or command line through /proc. Linux only; returns
    whether it applied. Root (or CAP_SYS_PTRACE) still can: see the docs on running untrusted plugins."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


WRAPPER_VARIABLE = "NASBENCH_ISOLATE_WRAPPER"


def wrapper() -> list:
    """The command the isolated child is started under, from NASBENCH_ISOLATE_WRAPPER (shell words), e.g.
    `setpriv --reuid=nobody --regid=nogroup --clear-groups` to run it as another user, who can read neither
    this process nor files the user running nasbench keeps private; empty: the child runs as this user."""
    import shlex

    return shlex.split(os.environ.get(WRAPPER_VARIABLE, ""))


class IsolatedFailure(Exception):
    """The isolated algorithm raised (or its process ended): one line, already naming where."""


class IsolatedAlgorithm(Algorithm):
    """A stand-in for `template` (an algorithm built from `spec` and `overrides` for `benchmark`) whose
    start/ask/tell/finish run in a child process. Same name, settings and needs as the template."""

    def __init__(self, spec: str, overrides: dict, benchmark: str, template: Algorithm):
        super().__init__(template.settings)
        self.name = template.name
        self._request = (spec, dict(overrides or {}), benchmark)
        self._child = None
        self._failed = False
        self._keys: dict = {}            # id(job handed to the simulator) -> the child's key for it
        self._jobs: dict = {}            # keep those jobs alive while their ids are keys

    def start(self, inputs) -> None:
        not_dumpable()                     # before the child exists: it must not read this process
        env = {k: v for k, v in os.environ.items() if not k.startswith("NASBENCH_")}
        command = wrapper() + [sys.executable, "-m", "nasbench_cli.harness.isolation"]
        try:
            self._child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            raise UserError(f"--isolate could not start {command[0]!r} ({WRAPPER_VARIABLE}): {exc.strerror}") from None
        self._call("build", self._request)
        self._call("start", inputs)

    def ask(self):
        answer = self._call("ask", None)
        if answer is None:
            return None
        key, job = answer
        if isinstance(job, Job):
            self._keys[id(job)] = key
            self._jobs[key] = job
        return job

    def tell(self, job, observation) -> None:
        key = self._keys.pop(id(job))
        self._jobs.pop(key, None)
        self._call("tell", (key, observation))

    def finish(self) -> None:
        if self._child is None or self._failed:     # after a failure the child has ended: just close
            self._close()
            return
        try:
            self._call("finish", None)
        finally:
            self._close()

    def _call(self, op: str, arg):
        try:
            _send(self._child.stdin, (op, arg))
            status, value = _receive(self._child.stdout)
        except (OSError, EOFError, pickle.UnpicklingError, struct.error):
            self._failed = True
            code = self._child.wait()
            self._close()
            raise IsolatedFailure(f"its isolated process ended during {op}() (exit code {code})") from None
        if status == "error":
            self._failed = True
            raise IsolatedFailure(value)
        return value

    def _close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            for stream in (child.stdin, child.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            if child.poll() is None:
                child.kill()
            child.wait()


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=5)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def serve(requests, replies) -> None:
    """The child's loop: build the algorithm, then answer start/ask/tell/finish until finish."""
    from nasbench_cli.harness.failures import trial_failure
    from optimizers.registry import make_algorithm

    algorithm, jobs, sequence = None, {}, 0
    while True:
        try:
            op, arg = _receive(requests)
        except EOFError:
            return
        try:
            if op == "build":
                spec, overrides, benchmark = arg
                algorithm = make_algorithm(spec, overrides, benchmark)
                value = None
            elif op == "start":
                value = algorithm.start(arg)
            elif op == "ask":
                job = algorithm.ask()
                value = None
                if job is not None:
                    sequence += 1
                    jobs[sequence] = job
                    value = (sequence, job)
            elif op == "tell":
                key, observation = arg
                value = algorithm.tell(jobs.pop(key), observation)
            elif op == "finish":
                value = algorithm.finish()
            else:
                raise ValueError(f"unknown message {op!r}")
            reply = ("ok", value)
        except UserError as exc:
            reply = ("error", str(exc))
        except BaseException as exc:  # the algorithm's failure, as one line; the parent fails the trial
            reply = ("error", str(trial_failure(exc)))
        _send(replies, reply)
        if op == "finish" or reply[0] == "error":
            return


if __name__ == "__main__":
    out = sys.stdout.buffer
    sys.stdout = sys.stderr              # a plugin's print() must not corrupt the message stream
    serve(sys.stdin.buffer, out)
