"""What an algorithm's code raised, as one line: the runners and the isolated process report a failed
trial with it, and the run goes on with the others."""


class TrialFailed(Exception):
    """A trial raised: the exception's type, message and where it was raised, as one line."""


def trial_failure(exc: BaseException) -> "TrialFailed":
    """One line for what an algorithm's code raised, where no Ctrl-C can arrive (a worker): its
    sys.exit() or KeyboardInterrupt ends its own trial, not the run."""
    if type(exc).__name__ == "IsolatedFailure":       # already one line, from the isolated process
        return TrialFailed(str(exc))
    if isinstance(exc, SystemExit):
        return TrialFailed(f"the algorithm called sys.exit({exc.code!r}) ({where_raised(exc)})")
    if isinstance(exc, KeyboardInterrupt):
        return TrialFailed(f"KeyboardInterrupt raised by the algorithm's code, not a Ctrl-C ({where_raised(exc)})")
    return TrialFailed(f"{type(exc).__name__}: {exc} ({where_raised(exc)})")


def where_raised(exc: BaseException) -> str:
    """'raised in FILE:LINE, in FUNCTION' for the innermost frame of `exc`'s traceback."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "raised outside Python code"
    frame = frames[-1]
    return f"raised in {frame.filename}:{frame.lineno}, in {frame.name}"
