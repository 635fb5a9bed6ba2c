"""Labels: the names runs are compared under and their results folders are named after."""
import re

from benchmarks.core.errors import UserError

LABEL_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}"


def check_label(label: str) -> str:
    """`label` if it can name a results folder (letters, digits, . _ @ + -; 64 at most), else UserError."""
    if not isinstance(label, str) or not re.fullmatch(LABEL_PATTERN, label):
        raise UserError(f"label {label!r} must be 1-64 letters, digits or . _ @ + - (starting with a letter "
                        "or digit): it names the results folder")
    return label
