"""Where the data and the cache live."""
import os
from pathlib import Path

from benchmarks.core.errors import DataError

REPO_ROOT = Path(__file__).resolve().parents[2]


def default_data_dir() -> Path:
    """`NASBENCH_DATA`, else `../shared/nas-bench-nlp` beside the repository."""
    env = os.environ.get("NASBENCH_DATA")
    if env:
        return Path(env).expanduser()
    return REPO_ROOT.parent / "shared" / "nas-bench-nlp"


def resolve_data_dir(data_dir=None) -> Path:
    """The data folder from `--data-dir`, else the default; DataError if it does not exist."""
    if data_dir is not None:
        where, how = Path(data_dir).expanduser(), "--data-dir"
    elif os.environ.get("NASBENCH_DATA"):
        where, how = default_data_dir(), "NASBENCH_DATA"
    else:
        where, how = default_data_dir(), "the default beside the repository"
    if not where.is_dir():
        raise DataError(f"data folder not found: {where} (from {how}); pass --data-dir DIR or set "
                        "NASBENCH_DATA to a folder with the NAS-Bench-NLP release layout")
    return where.resolve()


def chosen_folder(data_dir, env: str, shared_name: str) -> tuple[Path, str]:
    """(folder, where it came from) for a benchmark family's data: `data_dir` (--data-dir), else the
    environment variable `env`, else `../shared/<shared_name>` beside the repository. Not checked."""
    if data_dir is not None:
        return Path(data_dir).expanduser(), "--data-dir"
    if os.environ.get(env):
        return Path(os.environ[env]).expanduser(), env
    return REPO_ROOT.parent / "shared" / shared_name, "the default beside the repository"


def cache_dir() -> Path:
    """The user cache folder: `NASBENCH_CACHE`, else `~/.cache/nasbench`; created on demand."""
    path = Path(os.environ.get("NASBENCH_CACHE") or Path.home() / ".cache" / "nasbench").expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot use the cache folder {path} ({exc.strerror or exc}); set NASBENCH_CACHE "
                        "to a writable folder") from None
    return path
