"""`nasbench` in a process of its own, as `subprocess.run([python, -m, nasbench_cli.main, ...])`, for less.

A fresh `python -m nasbench_cli.main` spends about 0.9 CPU s starting (the interpreter, numpy, click,
rich, the registry) before it does any work, and the tests start about 400 of them. `run()` below
starts each from a warmed interpreter instead: one zygote per test process (started on first use), a
Python that has imported those modules and nothing else, forks a child per call. The child takes the
call's working folder, environment, stdin and output files, runs `nasbench_cli.main` as `python -m`
would (runpy, as `__main__`, with the call's arguments), waits for its threads, runs its exit handlers
and exits with the command's code. So each command still runs in a process of its own, started from a
process that ran no test: what a test asserts of `nasbench` (exit code, stdout, stderr, files, child
processes, signal handling) holds of the real command.

Libraries read some variables when they load (`LOAD_TIME_PREFIXES`: the BLAS, numpy and OpenMP pins,
PYTHON*): a call whose environment sets them otherwise than the zygote's gets a zygote started with
its own environment (the last two are kept: a test process that ran trials in-process carries the
workers' pins from then on). A real interpreter (`subprocess.run`) runs any other command, options
`run()` does not handle, and everything with `NASBENCH_TEST_FORK=0` (to compare the two).
Tests that need the process itself (kill it, time its start, list the modules it imports) use
`subprocess` directly.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

COMMAND = [sys.executable, "-m", "nasbench_cli.main"]
LOAD_TIME_PREFIXES = ("PYTHON", "OPENBLAS_", "MKL_", "ONEDNN_", "OMP_", "ATEN_", "GOTO", "LD_", "MALLOC", "NPY_")
CPU_SECONDS = [0.0]   # CPU time of the commands forked so far (with their children), for profiling
HANDLED = {"capture_output", "text", "env", "cwd", "timeout", "input", "check", "encoding"}

# The zygote: import what every command needs, then fork one child per request. A request is one JSON
# line on fd argv[1]; the answer on fd argv[2] is the child's pid, then its exit code and CPU seconds.
ZYGOTE = r'''
import atexit, io, json, os, runpy, sys, threading, traceback

import benchmarks                              # first, as in the command: pins the BLAS kernels
import nasbench_cli.main
from nasbench_cli.main import COMMANDS
import importlib
for target in COMMANDS.values():
    importlib.import_module(target.split(":")[0])
for name in ("numpy", "click", "rich.console", "rich.progress", "loky", "benchmarks.core.registry",
             "benchmarks.core.environment", "optimizers.registry", "nasbench_cli.harness.runner",
             "nasbench_cli.harness.simulator", "scipy.stats", "scipy.special"):
    try:
        importlib.import_module(name)
    except ImportError:
        pass

requests = os.fdopen(int(sys.argv[1]), "r")
answers = os.fdopen(int(sys.argv[2]), "w", buffering=1)


def exit_code(exc):
    """The process exit code Python gives a SystemExit (None 0, an int itself, else printed and 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def child(request):
    requests.close()
    answers.close()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in ((0, request["stdin"], os.O_RDONLY),
                            (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = sys.__stdin__ = open(0, "r", closefd=False)
    sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.path.insert(0, os.getcwd())            # as `python -m` puts it first
    sys.argv = ["nasbench_cli.main", *request["argv"]]
    sys.modules.pop("nasbench_cli.main", None)   # run afresh as __main__, as `python -m` does
    code = 0
    try:
        runpy.run_module("nasbench_cli.main", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exit_code(exc)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()                  # what the interpreter does at exit: threads, then atexit
        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code & 0xFF)


for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(request)
        finally:
            os._exit(1)
    answers.write(f"{pid}\n")
    _, status, usage = os.wait4(pid, 0)
    answers.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime}\n")
'''


class Zygote:
    """One warmed interpreter that forks a `nasbench` command per request (see the module's text)."""

    def __init__(self, environment: dict):
        request_read, self._request_write = os.pipe()
        self._answer_read, answer_write = os.pipe()
        self.environment = dict(environment)
        self._log = tempfile.NamedTemporaryFile(prefix="nasbench-zygote-", suffix=".log", delete=False)
        self.process = subprocess.Popen([sys.executable, "-P", "-c", ZYGOTE, str(request_read), str(answer_write)],
                                        pass_fds=(request_read, answer_write), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self._log, env=self.environment)
        os.close(request_read)
        os.close(answer_write)
        self._answers = os.fdopen(self._answer_read, "r", buffering=1)
        self._lock = threading.Lock()

    def _answer(self, timeout: float | None) -> list[str] | None:
        """The next line the zygote writes, split; None if none came within `timeout` seconds."""
        if timeout is not None and not select.select([self._answers], [], [], timeout)[0]:
            return None
        line = self._answers.readline()
        if not line:
            raise RuntimeError(f"the nasbench test zygote died: {Path(self._log.name).read_text()[-2000:]}")
        return line.split()

    def run(self, argv: list[str], cwd: str, env: dict, stdin: bytes | None,
            timeout: float | None) -> tuple[int | None, bytes, bytes]:
        """(exit code, stdout, stderr) of `nasbench argv`; exit code None when it ran past `timeout` seconds
        (it is killed then)."""
        with self._lock, tempfile.TemporaryDirectory(prefix="nasbench-call-") as folder:
            paths = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
            Path(paths["stdin"]).write_bytes(stdin or b"")
            request = {"argv": argv, "cwd": cwd, "env": env, **paths}
            os.write(self._request_write, (json.dumps(request) + "\n").encode())
            (pid,) = self._answer(None)
            answer = self._answer(timeout)
            timed_out = answer is None
            if timed_out:
                os.kill(int(pid), signal.SIGKILL)
                answer = self._answer(None)
            CPU_SECONDS[0] += float(answer[1])
            code = None if timed_out else int(answer[0])
            return code, Path(paths["stdout"]).read_bytes(), Path(paths["stderr"]).read_bytes()

    def close(self) -> None:
        os.close(self._request_write)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        Path(self._log.name).unlink(missing_ok=True)


_ZYGOTES: dict[tuple, Zygote] = {}     # by the load-time variables of their environment, oldest first


def _load_time_variables(env: dict) -> tuple:
    return tuple(sorted((name, value) for name, value in env.items() if name.startswith(LOAD_TIME_PREFIXES)))


def _zygote(env: dict) -> Zygote:
    """A live zygote whose load-time variables are `env`'s (started if there is none; two are kept)."""
    key = _load_time_variables(env)
    zygote = _ZYGOTES.get(key)
    if zygote is None or zygote.process.poll() is not None:
        while len(_ZYGOTES) >= 2:
            _ZYGOTES.pop(next(iter(_ZYGOTES))).close()
        zygote = _ZYGOTES[key] = Zygote(env)
    return zygote


@atexit.register
def _close_zygotes() -> None:
    while _ZYGOTES:
        _ZYGOTES.popitem()[1].close()


def _decode(data: bytes, text: bool, encoding: str | None):
    if not (text or encoding):
        return data
    return data.decode(encoding or "utf-8").replace("\r\n", "\n").replace("\r", "\n")   # universal newlines


def run(command, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(command, **kwargs)`, forked from the zygote when `command` is
    `[sys.executable, "-m", "nasbench_cli.main", ...]` and a fork can stand in for it (module text)."""
    command = [str(part) for part in command]
    env = dict(kwargs["env"]) if kwargs.get("env") is not None else dict(os.environ)
    forkable = (command[:3] == COMMAND and set(kwargs) <= HANDLED and hasattr(os, "fork")
                and os.environ.get("NASBENCH_TEST_FORK", "1") != "0")
    if not forkable:
        return subprocess.run(command, **kwargs)
    zygote = _zygote(env)
    text, encoding = kwargs.get("text", False), kwargs.get("encoding")
    stdin = kwargs.get("input")
    if isinstance(stdin, str):
        stdin = stdin.encode(encoding or "utf-8")
    cwd = os.path.abspath(kwargs["cwd"]) if kwargs.get("cwd") is not None else os.getcwd()
    code, out, err = zygote.run(command[3:], cwd, env, stdin, kwargs.get("timeout"))
    captured = kwargs.get("capture_output", False)
    stdout = _decode(out, text, encoding) if captured else None
    stderr = _decode(err, text, encoding) if captured else None
    if not captured:                      # what the command printed goes where a child's output would
        sys.stdout.write(out.decode(errors="replace"))
        sys.stderr.write(err.decode(errors="replace"))
    if code is None:
        raise subprocess.TimeoutExpired(command, kwargs["timeout"], output=stdout, stderr=stderr)
    if kwargs.get("check") and code != 0:
        raise subprocess.CalledProcessError(code, command, output=stdout, stderr=stderr)
    return subprocess.CompletedProcess(command, code, stdout, stderr)
