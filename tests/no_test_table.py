"""A SearchTable stand-in for tests: fails on any attribute whose name mentions "test", so a test can
show that an optimizer never reads a test loss."""


class NoTestTable:
    """Wraps a SearchTable; reading an attribute named *test* raises AssertionError."""

    def __init__(self, table):
        object.__setattr__(self, "_table", table)

    def __getattr__(self, name):
        if "test" in name.lower():
            raise AssertionError(f"optimizer read '{name}'")
        return getattr(self._table, name)
