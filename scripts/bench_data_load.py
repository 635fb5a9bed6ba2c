"""Benchmark: loading PTB from the packed cache vs parsing every JSON log (the plain reference).

Prints seconds for: the reference (json.loads of all 14,322 logs into arrays), building the cache
(from an empty cache folder), and loading from the cache (median of several cold loads in this
process, memo cleared). Targets: cache load >= 20x faster than the reference and < 0.1 s; build < 15 s.

    python scripts/bench_data_load.py [--data-dir DIR] [--repeat 7]
"""
import argparse
import json
import os
import statistics
import tempfile
import time
import zipfile


def reference_parse(zip_path):
    """The plain way: open the zip and json-parse every log into per-epoch arrays."""
    import numpy as np

    with zipfile.ZipFile(zip_path) as archive:
        logs = [json.loads(archive.read(n)) for n in archive.namelist() if n.endswith(".json")]
    val = np.full((len(logs), 50), np.nan)
    for row, log in enumerate(logs):
        val[row, :len(log["val_losses"])] = log["val_losses"]
    return len(logs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    os.environ["NASBENCH_CACHE"] = tempfile.mkdtemp(prefix="nasbench-bench-cache-")
    from benchmarks.core import registry
    from benchmarks.core.paths import resolve_data_dir

    zip_path = resolve_data_dir(args.data_dir) / registry.BENCHMARKS["ptb"].logs
    started = time.perf_counter()
    count = reference_parse(zip_path)
    reference_s = time.perf_counter() - started

    started = time.perf_counter()
    registry.load_benchmark("ptb", args.data_dir)
    build_s = time.perf_counter() - started

    loads = []
    for _ in range(args.repeat):
        registry._LOADED.clear()
        started = time.perf_counter()
        benchmark = registry.load_benchmark("ptb", args.data_dir)
        loads.append(time.perf_counter() - started)
    load_s = statistics.median(loads)
    assert benchmark.search.n == count
    print(f"architectures              {count}")
    print(f"reference: parse all JSON  {reference_s:7.3f} s")
    print(f"build packed cache         {build_s:7.3f} s   (target < 15 s)")
    print(f"load from cache (median)   {load_s:7.3f} s   (target < 0.1 s; min {min(loads):.3f}, max {max(loads):.3f})")
    print(f"speed-up over reference    {reference_s / load_s:7.1f} x (target >= 20 x)")


if __name__ == "__main__":
    main()
