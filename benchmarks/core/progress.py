"""Progress of long one-off work in the data layer (building a cache), shown by whoever installs a sink.

The data layer calls `step(what, done, total)`; it prints nothing itself. The CLI installs a sink
that draws a progress bar on a terminal (nasbench_cli.main); the Python API and tests install none.
"""
_sink = None


def install(sink) -> None:
    """`sink(what, done, total)`, called as work proceeds (done == total at the end); None removes it."""
    global _sink
    _sink = sink


def step(what: str, done: int, total: int) -> None:
    if _sink is not None:
        _sink(what, done, total)
