"""List the site-packages folders whose modules the test suite imports, for the test run's byte-compile step.

    .venv/bin/python scripts/list_imported_dirs.py [--out tests/data/imported-package-dirs.txt]

Run it in a virtual environment made by the README's test command (installed with `pip --no-compile`, then
the suite run once): a folder under site-packages holds compiled modules (`__pycache__/*.<tag>.pyc`) then only
if some process of the suite imported one of its modules. The list (folders relative to site-packages, one per
line, sorted) lets the test run's controlling process byte-compile those modules on every core before the
pytest-xdist workers start (tests/conftest.py), instead of each worker compiling the same modules on import.
A stale list costs only time: a listed folder that does not exist is skipped, a module it misses is compiled
when it is imported, as without the list.
"""
import argparse
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "tests" / "data" / "imported-package-dirs.txt"


def imported_dirs(site_packages: Path) -> list[str]:
    """Folders under `site_packages` (relative, '/'-separated) holding modules compiled for this Python."""
    tag = sys.implementation.cache_tag
    folders = {pyc.parent.parent.relative_to(site_packages).as_posix()
               for pyc in site_packages.rglob(f"__pycache__/*.{tag}.pyc")}
    return sorted(folders)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="list_imported_dirs.py [--out FILE] [--site-packages DIR]")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where to write the list (default: {DEFAULT_OUT.relative_to(REPO)})")
    parser.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]),
                        help="the site-packages folder to read (default: this interpreter's)")
    args = parser.parse_args(argv)
    if not args.site_packages.is_dir():
        parser.error(f"no such folder: {args.site_packages}")
    folders = imported_dirs(args.site_packages)
    if not folders:
        parser.error(f"no compiled modules under {args.site_packages}: run the test suite in this environment first")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text("".join(f"{folder}\n" for folder in folders))
    tmp.replace(args.out)
    print(f"{len(folders)} folders -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
