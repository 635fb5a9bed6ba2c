"""How far a fresh rescoring of shipped training-free scores lands from the shipped values on this machine.

The shipped score tables (benchmarks/proxies/shipped_scores) are read as they are, so every search that
uses them gives the same trajectory on every CPU. Rescoring a cell from scratch runs a float32 PyTorch
network whose arithmetic (summation order, fused kernels, MKL/oneDNN code paths) differs between CPU
types and between kernels of one CPU, so a rescored value can differ in its last digits. This script
measures by how much, for a seeded sample of cells, one thread per cell, and prints the largest
relative difference per benchmark (the figure tests/test_out_of_the_box.py's tolerance is set from).

    python scripts/rescore_spread.py --cells 200                              # on this machine's data
    ATEN_CPU_CAPABILITY=default python scripts/rescore_spread.py --cells 200  # other kernels, same CPU
    python scripts/rescore_spread.py --cells 200 --write-sample S.json        # for a machine without the data:
    NASBENCH_CORPORA=corpora python scripts/rescore_spread.py --sample S.json  # recipes and shipped values from S

--sample reads the cells' recipes and shipped values from the file --write-sample made (the corpus still
comes from NASBENCH_CORPORA or ../shared/corpora): another machine needs only the repository, that file
and the corpora folder.
"""
import argparse
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

METRIC = "hidden_covariance_l1"
BENCHMARKS = ("ptb", "wt2")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--cells", type=int, default=100, help="cells per benchmark (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample of cells (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="processes scoring cells at once (one thread each)")
    parser.add_argument("--write-sample", type=Path, metavar="FILE",
                        help="also write the sample (ids, recipes, shipped values, provenance) to FILE")
    parser.add_argument("--sample", type=Path, metavar="FILE", help="rescore the cells of a --write-sample file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser.parse_args()


def draw_sample(cells: int, seed: int) -> dict:
    """{benchmark: {"provenance", "ids", "recipes", "shipped"}} for `cells` seeded cells with a finite shipped value."""
    import numpy as np

    from benchmarks.core.registry import load_benchmark
    from benchmarks.proxies import shipped
    from benchmarks.proxies.score_cache import ScoreCache

    sample = {}
    for name in BENCHMARKS:
        benchmark = load_benchmark(name)
        values, provenance = shipped.shipped_values(benchmark.search, METRIC, ScoreCache(name).path.name)
        finite = np.flatnonzero(np.isfinite(values))
        rows = sorted(np.random.default_rng(seed).choice(finite, size=min(cells, len(finite)), replace=False).tolist())
        sample[name] = {"provenance": provenance, "ids": [int(benchmark.search.ids[r]) for r in rows],
                        "recipes": [benchmark.search.recipes[r] for r in rows],
                        "shipped": [float(values[r]) for r in rows]}
    return sample


def _rescore(task):
    name, recipe, provenance = task
    import torch
    from threadpoolctl import threadpool_limits

    from benchmarks.proxies.metrics import score_recipe
    from benchmarks.proxies.minibatch import load_corpus

    torch.set_num_threads(1)
    with threadpool_limits(1):
        scores, _ = score_recipe(json.loads(recipe), load_corpus(name), (METRIC,), seed=provenance["seed"],
                                 batch_size=provenance["batch_size"], seq_len=provenance["seq_len"],
                                 split=provenance["split"])
    return scores[METRIC]


def spread(sample: dict, jobs: int) -> dict:
    """Per benchmark: cells, exact matches, largest and median |rescored - shipped| / |shipped|, worst cell."""
    import numpy as np

    result = {}
    for name, part in sample.items():
        tasks = [(name, recipe, part["provenance"]) for recipe in part["recipes"]]
        if jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(jobs) as pool:
                got = list(pool.map(_rescore, tasks, chunksize=4))
        else:
            got = [_rescore(task) for task in tasks]
        got, want = np.array(got, dtype=float), np.array(part["shipped"], dtype=float)
        relative = np.abs(got - want) / np.abs(want)
        worst = int(np.nanargmax(relative))
        result[name] = {"cells": len(got), "exact": int((got == want).sum()),
                        "max_relative_difference": float(np.nanmax(relative)),
                        "median_relative_difference": float(np.nanmedian(relative)),
                        "worst_cell": {"id": part["ids"][worst], "rescored": float(got[worst]),
                                       "shipped": float(want[worst])}}
    return result


def machine() -> dict:
    import os

    import torch

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY"), "python": platform.python_version()}


def main() -> None:
    args = parse_args()
    import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)

    if args.sample:
        sample = json.loads(args.sample.read_text())
    else:
        sample = draw_sample(args.cells, args.seed)
        if args.write_sample:
            args.write_sample.write_text(json.dumps(sample))
    report = {"machine": machine(), "metric": METRIC, "benchmarks": spread(sample, max(1, args.jobs))}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{report['machine']['cpu']}, torch {report['machine']['torch']} ({report['machine']['cpu_capability']})")
    for name, figures in report["benchmarks"].items():
        print(f"{name}: {figures['exact']} of {figures['cells']} exact; largest relative difference "
              f"{figures['max_relative_difference']:.3g} (cell {figures['worst_cell']['id']}), median "
              f"{figures['median_relative_difference']:.3g}")


if __name__ == "__main__":
    main()
