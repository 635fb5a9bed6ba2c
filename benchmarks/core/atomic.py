"""Atomic file writes: a temporary file in the target folder, then `os.replace`.

A reader (or a run killed halfway) sees either the old complete file or the new complete file. A
folder that cannot be written (read-only, a file in the way, a full disk) is a `UserError` naming the
file, one line for the user, with nothing left behind.
"""
import json
import os
import tempfile
from pathlib import Path

from benchmarks.core.errors import UserError


def write_bytes_atomic(path, data: bytes) -> Path:
    """Write `data` to `path` atomically; returns the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror or exc}); choose a writable folder") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise UserError(f"cannot write {path} ({exc.strerror or exc}); {_advice(path, exc)}") from None
        raise
    return path


def _advice(path: Path, exc: OSError) -> str:
    """What to do about a failed write, from what is in the way."""
    import errno

    if path.is_dir() and not path.is_symlink():
        return "a folder of that name is in the way: move or delete it"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free space there or choose another folder"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make it writable or choose another folder"
    return "choose another folder"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path, obj, indent=None) -> Path:
    """JSON with NaN refused (use None for missing values)."""
    return write_text_atomic(path, json.dumps(obj, indent=indent, allow_nan=False) + "\n")


def save_npz_atomic(path, compressed: bool = False, **arrays) -> Path:
    """An .npz of `arrays` (uncompressed unless `compressed`), written atomically."""
    import io

    import numpy as np

    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return write_bytes_atomic(path, buffer.getvalue())
