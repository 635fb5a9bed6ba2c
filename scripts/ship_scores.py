"""Copy a complete training-free score table from the cache into the package (benchmarks/proxies/shipped_scores).

    nasbench proxies build --metric hidden_covariance_l1 --all --split train [--benchmark wt2] --jobs 2
    python scripts/ship_scores.py --benchmark ptb --metric hidden_covariance_l1 --split train

Refuses a table that does not cover every cell of the benchmark. Writes the file atomically and
records its SHA-256 in MANIFEST.json, which the loader checks.
"""
import argparse
import hashlib
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import benchmarks  # noqa: E402,F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
import numpy as np  # noqa: E402

from benchmarks.core.atomic import save_npz_atomic, write_text_atomic  # noqa: E402
from benchmarks.core.registry import load_benchmark  # noqa: E402
from benchmarks.proxies import minibatch as mb  # noqa: E402
from benchmarks.proxies.score_cache import SCORE_VERSION, ScoreCache, load_scores  # noqa: E402
from benchmarks.proxies.shipped import (MANIFEST_NAME, SHIPPED_DIR, file_sha256, manifest,  # noqa: E402
                                        recipe_hashes, shipped_name)


def corpus_sha256(benchmark: str) -> str:
    """SHA-256 over the corpus's train, valid and test files (the vocabulary depends on all three)."""
    digest = hashlib.sha256()
    folder = mb.corpora_dir() / mb.CORPUS_OF_BENCHMARK[benchmark]
    for split in mb.SPLITS:
        digest.update(hashlib.sha256((folder / f"{split}.txt").read_bytes()).digest())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="ptb", choices=sorted(mb.CORPUS_OF_BENCHMARK))
    parser.add_argument("--metric", default="hidden_covariance_l1")
    parser.add_argument("--split", default=mb.SPLIT, choices=mb.SCORING_SPLITS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    benchmark = load_benchmark(args.benchmark)
    search = benchmark.search
    cache = ScoreCache(args.benchmark, args.seed, split=args.split)
    table = cache.load()
    scored = table.scored_mask(args.metric, search.ids)
    if not scored.all():
        sys.exit(f"the cache {cache.path} scores {int(scored.sum())} of {search.n} cells; run `nasbench proxies "
                 f"build --metric {args.metric} --all --split {args.split} --benchmark {args.benchmark}` first")
    values = load_scores(benchmark, args.metric, args.seed, split=args.split)
    import torch

    provenance = {
        "benchmark": args.benchmark, "metric": args.metric, "split": args.split, "seed": args.seed,
        "batch_size": cache.batch_size, "seq_len": cache.seq_len, "score_version": SCORE_VERSION,
        "cells": int(search.n), "corpus_sha256": corpus_sha256(args.benchmark),
        "recipes_sha256": hashlib.sha256(recipe_hashes(search.recipes).tobytes()).hexdigest(),
        "torch": torch.__version__, "python": platform.python_version(),
        "command": (f"nasbench proxies build --metric {args.metric} --all --split {args.split} --seed {args.seed}"
                    + ("" if args.benchmark == "ptb" else f" --benchmark {args.benchmark}")),
    }
    name = shipped_name(args.benchmark, args.metric, cache.path.name)
    path = SHIPPED_DIR / name
    SHIPPED_DIR.mkdir(parents=True, exist_ok=True)
    save_npz_atomic(path, compressed=True, ids=np.asarray(search.ids, dtype=np.int64),
                    recipe_sha=recipe_hashes(search.recipes), values=values,
                    provenance=np.array(json.dumps(provenance, sort_keys=True)))
    entries = manifest()
    entries[name] = file_sha256(path)
    write_text_atomic(SHIPPED_DIR / MANIFEST_NAME, json.dumps(entries, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({path.stat().st_size:,} bytes, {search.n} cells, "
          f"{int(np.isfinite(values).sum())} finite)")


if __name__ == "__main__":
    main()
