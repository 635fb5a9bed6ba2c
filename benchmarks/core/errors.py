"""Errors caused by user input (bad data folder, unknown id, malformed recipe).

The CLI prints their message as one line and exits with code 2; anything else is a bug.
"""


class UserError(Exception):
    """A mistake in the user's input or data; the message says what and how to fix it."""


class DataError(UserError):
    """The benchmark data (logs, zip, features CSV) is missing or malformed."""
