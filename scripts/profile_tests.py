"""Where the test suite's CPU goes: each test's CPU seconds, its own and its child processes' (forked
commands, trial processes, Dask clusters), and the totals per test module.

    .venv/bin/python scripts/profile_tests.py [--top 30] [--json FILE] [PYTEST ARGS ...]

Runs pytest in this process, one test at a time (no xdist: a test's CPU is then its own, whatever runs
beside it), with the suite's usual options; the PYTEST ARGS choose tests as on pytest's command line
(e.g. `tests/test_gpt.py`, `-k smac`). A child process is counted while it lives (psutil) and when it is
reaped; a process that outlives its test is charged to the test that ends it. The whole fast set takes
about ten minutes on 2 cores.
"""
import argparse
import json
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


class CpuProfile:
    """A pytest plugin: (test id, wall s, CPU s of this process, CPU s of its children) per test."""

    def __init__(self):
        import psutil

        self.me, self.rows = psutil.Process(), []

    def _children(self) -> dict:
        cpu = {}
        for child in self.me.children(recursive=True):
            try:
                t = child.cpu_times()
                cpu[(child.pid, child.create_time())] = t.user + t.system + t.children_user + t.children_system
            except Exception:  # noqa: BLE001 - gone or not ours to read: counted when reaped
                pass
        return cpu

    def _snapshot(self):
        own = resource.getrusage(resource.RUSAGE_SELF)
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime, self._children(),
                time.perf_counter())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        before = self._snapshot()
        yield
        after = self._snapshot()
        live = sum(cpu - before[2].get(key, 0.0) for key, cpu in after[2].items())
        gone = sum(cpu for key, cpu in before[2].items() if key not in after[2])   # counted again when reaped
        self.rows.append((item.nodeid, after[3] - before[3], after[0] - before[0],
                          max(0.0, after[1] - before[1] + live - gone)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="profile_tests.py [--top N] [--json FILE] [PYTEST ARGS ...]")
    parser.add_argument("--top", type=int, default=30, help="tests to list, most CPU first")
    parser.add_argument("--json", dest="json_path", default=None, help="also write every test's row here")
    args, pytest_args = parser.parse_known_args()
    try:
        import psutil  # noqa: F401
    except ImportError as exc:
        sys.exit(f"error: {exc.name} is needed: pip install psutil (the test command's extras bring it)")
    profile = CpuProfile()
    code = pytest.main(["-p", "no:xdist", "-q", "--rootdir", str(REPO), *pytest_args], plugins=[profile])
    rows = sorted(profile.rows, key=lambda row: -(row[2] + row[3]))
    modules = defaultdict(float)
    for nodeid, _, own, children in rows:
        modules[nodeid.split("::")[0]] += own + children
    print(f"\n{len(rows)} tests, {sum(r[2] + r[3] for r in rows):.0f} CPU s in all "
          f"({sum(r[2] for r in rows):.0f} in this process, {sum(r[3] for r in rows):.0f} in children)")
    print(f"\nthe {args.top} tests that took the most CPU (s: all, own, children; wall)")
    for nodeid, wall, own, children in rows[:args.top]:
        print(f"{own + children:7.1f} {own:6.1f} {children:6.1f} {wall:6.1f}  {nodeid}")
    print("\nper module (CPU s)")
    for module, cpu in sorted(modules.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{cpu:7.1f}  {module}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps([dict(zip(("test", "wall_s", "own_cpu_s", "children_cpu_s"), row))
                                                    for row in rows], indent=1))
    sys.exit(int(code))


if __name__ == "__main__":
    main()
