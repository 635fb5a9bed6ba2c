"""Sparsity of the search space (the paper's Fig. 7): graph-edit-distance upper bounds between random pairs.

As the release's `calculate_ged.py`: a cell becomes a directed graph of its nodes (hidden outputs labelled
`h_new_k:op`, inputs by name, other nodes by op), two nodes match when their labels are equal, and
NetworkX's `optimize_edit_paths` (behind `optimize_graph_edit_distance`) yields ever smaller upper bounds; the last one found within a
time limit per pair is kept (the release allowed 600 s, so its bounds are tighter). Bounds depend on the
machine's speed through that limit, so the result is cached (seed, pairs, limit, data checksum) and
reused; the pairs themselves are seeded.
"""
import json
import time

import numpy as np

from benchmarks.core.atomic import write_json_atomic
from benchmarks.core.paths import cache_dir


def cell_graph(recipe: dict):
    """The release's `make_graph`: a networkx DiGraph with an `op` label per node."""
    import networkx as nx

    graph = nx.DiGraph()
    for key, node in recipe.items():
        graph.add_node(key, op=f"{key}:{node['op']}" if key.startswith("h_new_") else node["op"])
        for source in node["input"]:
            if source not in graph or "op" not in graph.nodes[source]:
                graph.add_node(source, op=source if ("h_prev" in source or source == "x") else None)
            graph.add_edge(source, key)
    return graph


def ged_upper_bound(recipe_a: dict, recipe_b: dict, time_limit_s: float) -> tuple[float, bool]:
    """(best upper bound found within about `time_limit_s` seconds, whether the search finished in time:
    then it is the exact distance). NetworkX checks the limit inside its search (`optimize_edit_paths`)."""
    import networkx as nx

    started = time.perf_counter()
    best = None
    for _, _, cost in nx.optimize_edit_paths(cell_graph(recipe_a), cell_graph(recipe_b),
                                             node_match=lambda a, b: a["op"] == b["op"], timeout=time_limit_s):
        best = cost
    return float(best), time.perf_counter() - started < time_limit_s


def random_pairs(benchmark, pairs: int, seed: int) -> np.ndarray:
    """[pairs, 2] distinct row pairs over the architectures that trained all epochs, seeded."""
    from benchmarks.cells.paper_analyses import complete_rows

    rows = complete_rows(benchmark)
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(rows, 2, replace=False) for _ in range(pairs)])


def sparsity(benchmark, pairs: int = 1000, seed: int = 0, time_limit_s: float = 1.0, jobs: int = 1,
             progress=None) -> dict:
    """GED upper bounds of `pairs` random pairs, from the cache if this exact computation was made before."""
    key = f"{benchmark.name}-{benchmark.checksum[:16]}-ged-p{pairs}-s{seed}-t{time_limit_s:g}"
    path = cache_dir() / "ged" / f"{key}.json"
    if path.is_file():
        return json.loads(path.read_text()) | {"cached": True, "cache_path": str(path)}
    from joblib import Parallel, delayed

    chosen = random_pairs(benchmark, pairs, seed)
    search = benchmark.search
    tasks = (delayed(ged_upper_bound)(search.recipe(a), search.recipe(b), time_limit_s) for a, b in chosen)
    results = []
    for result in Parallel(n_jobs=jobs, return_as="generator")(tasks):
        results.append(result)
        if progress is not None:
            progress(len(results), pairs)
    bounds = [b for b, _ in results]
    report = {"benchmark": benchmark.name, "pairs": pairs, "seed": seed, "time_limit_s": time_limit_s,
              "ids": search.ids[chosen].tolist(), "ged_upper_bound": bounds,
              "exact": [bool(e) for _, e in results], "mean": float(np.mean(bounds)),
              "median": float(np.median(bounds)), "min": float(np.min(bounds)), "max": float(np.max(bounds))}
    write_json_atomic(path, report)
    return report | {"cached": False, "cache_path": str(path)}
