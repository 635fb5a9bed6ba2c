"""A fresh cache folder for one test, seeded with this test run's packed tables.

A test that needs a cache of its own (a score table only it builds, a cache it may damage) but does not
test how the packed tables are built points NASBENCH_CACHE at `seeded_cache(folder)`: the folder starts
with copies of the packed tables this test process already has (conftest.py builds them once per run),
so the command does not parse PTB's 14,322 JSON logs again (8-10 CPU s each time). Tests of the cache
itself start from an empty folder instead.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def seeded_cache(folder) -> Path:
    """`folder` (made if missing) with writable copies of this process's packed PTB table and the cells'
    canonical hashes, returned as a Path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    session = Path(os.environ["NASBENCH_CACHE"])
    for packed in session.glob("ptb-*.npz"):
        shutil.copyfile(packed, folder / packed.name)
    hashes = session / "cell_hashes"
    if hashes.is_dir() and not (folder / "cell_hashes").exists():
        shutil.copytree(hashes, folder / "cell_hashes", copy_function=shutil.copyfile)
    return folder
