"""How long loading a gpt table takes from nasbench's cache, next to parsing its JSON lines (the
reference), in the same run.

    .venv/bin/python scripts/bench_gpt_load.py [--repeat 5]

Each load is a fresh `load_benchmark` (the in-process memo cleared): from the cache it reads the .npz
and hashes the source files (the cache key); the reference parses and validates every JSON line
(`benchmarks.gpt.table.parse_observations`) without building anything else. Prints the median seconds.
"""
import argparse
import statistics
import time


def main() -> None:
    from benchmarks.core import registry
    from benchmarks.gpt import table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name in ("gpt-s", "gpt-m", "gpt-l"):
        registry._LOADED.clear()
        registry.load_benchmark(name)                   # the cache exists from here on
        cached, parsed = [], []
        for _ in range(args.repeat):
            registry._LOADED.clear()
            started = time.perf_counter()
            benchmark = registry.load_benchmark(name)
            cached.append(time.perf_counter() - started)
            observations, config = (benchmark.data_dir / f for f in table.files(name))
            space, _ = table.space_and_config(name, config)
            started = time.perf_counter()
            table.parse_observations(name, observations, space)
            parsed.append(time.perf_counter() - started)
        c, p = statistics.median(cached), statistics.median(parsed)
        print(f"{name}: load from the cache {c:.4f} s, parse the JSON lines {p:.4f} s ({p / c:.0f}x), "
              f"{benchmark.search.n} architectures")


if __name__ == "__main__":
    main()
