"""Reading a data file of JSON objects, one a line, with one-line errors naming the file and line."""
import json
from pathlib import Path

from benchmarks.core.errors import DataError


def json_objects(path: Path, what: str, skip_blank: bool = False):
    """(line number, object) of each line of `path`; DataError (one line) for a missing file (named as
    `what`), text that is not UTF-8, a line that is not JSON or not a JSON object. `skip_blank`: blank
    lines are passed over instead of refused."""
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{what} not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    for number, line in enumerate(lines, 1):
        if skip_blank and not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise DataError(f"{path} line {number}: not JSON ({type(exc).__name__})") from None
        if not isinstance(record, dict):
            raise DataError(f"{path} line {number}: not a JSON object")
        yield number, record
