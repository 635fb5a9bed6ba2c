"""Names a user types (algorithms, benchmarks): case-insensitive matching and "did you mean" hints."""
import difflib


def canonical(name: str, choices) -> str | None:
    """The choice equal to `name` ignoring case, if exactly one is; else None."""
    matches = [c for c in choices if c.lower() == name.lower()]
    return matches[0] if len(matches) == 1 else None


def did_you_mean(name: str, choices) -> str:
    """' (did you mean 'x'?)' for the closest choices by spelling (ignoring case), or ''."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=2, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(lowered[c]) for c in close)}?)"
