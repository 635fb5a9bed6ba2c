"""Build held-out variants of the PTB table as data folders (`--data-dir`), for checking a change on data
it was not tuned on: `best-removed` (the logs without the 50 cells with the lowest test loss at any epoch)
and `half` (a random half of the logs, seed 11).

    python scripts/heldout_folders.py OUT_DIR
    nasbench run --data-dir OUT_DIR/best-removed --algo lcbo,asha,phb,prs,hb --trials 30 --out R
    python scripts/anytime_table.py R
"""
import argparse
import json
import random
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.core.paths import resolve_data_dir  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402

REMOVED_BEST = 50
HALF_SEED = 11


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("out_dir", type=Path,
                        help="folder to create the variants in (outside the repository: they are data)")
    out = parser.parse_args().out_dir
    ptb = load_benchmark("ptb")
    with np.errstate(all="ignore"):
        best = np.nanmin(np.where(np.isfinite(ptb.test_loss), ptb.test_loss, np.inf), axis=1)
    removed = {int(i) for i in ptb.search.ids[np.argsort(best)[:REMOVED_BEST]]}
    source = resolve_data_dir(None) / "train_logs_single_run" / "logs.zip"
    with zipfile.ZipFile(source) as archive:
        names = [n for n in archive.namelist() if n.endswith(".json")]     # the zip's order: the seed's sample
        half = set(random.Random(HALF_SEED).sample(names, len(names) // 2))
        for variant, keep in (("best-removed", lambda n, data: json.loads(data)["recepie_id"] not in removed),
                              ("half", lambda n, data: n in half)):
            target = out / variant / "train_logs_single_run" / "logs.zip"
            target.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(target, "w") as zipped:
                for name in names:
                    data = archive.read(name)
                    if keep(name, data):
                        zipped.writestr(name, data)
            print(f"wrote {target}")


if __name__ == "__main__":
    main()
