"""`load_benchmark`: a benchmark by catalog name, through the loader module its catalog entry names."""
from dataclasses import replace

from benchmarks.core.catalog import BENCHMARKS, BenchmarkSpec
from benchmarks.core.errors import UserError
from benchmarks.core.table import Benchmark


_LOADED: dict = {}


def get_spec(name: str) -> BenchmarkSpec:
    """The catalog entry of `name`; UserError with the closest names otherwise (the CLI's --benchmark
    options accept any case and pass the catalog's spelling)."""
    from benchmarks.core.names import did_you_mean

    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark '{name}'{did_you_mean(name, BENCHMARKS)}; "
                        f"choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def load_benchmark(name: str = "ptb", data_dir=None, rebuild_cache: bool = False, test_losses: bool = True) -> Benchmark:
    """A loaded benchmark by catalog name ('ptb', 'wt2', 'bert', 'gpt-s', 'gpt-m', 'gpt-l'), memoised per process.

    `test_losses=False`: without them (`test_loss` None), for a process that runs searchers: trials
    read them with `load_test_losses` only after their algorithm has finished, and drop them.

    `data_dir`: the folder holding that benchmark's files (ptb and wt2: the NAS-Bench-NLP release
    layout, e.g. `../shared/nas-bench-nlp`; bert: the NAS-Bench-BERT files, e.g.
    `../shared/training-free-nas`; gpt-*: the HW-GPT-Bench files, e.g. `../shared/hw-gpt-bench`); default: the benchmark's environment variable, else its folder
    in `../shared` beside the repository. The catalog entry names the loader module.
    """
    import importlib

    spec = get_spec(name)
    module = importlib.import_module(spec.loader)
    memo_key = (name, str(module.data_folder(data_dir)))
    if not test_losses:
        searcher_key = memo_key + ("without test losses",)
        if searcher_key not in _LOADED or rebuild_cache:
            full = None if rebuild_cache else _LOADED.get(memo_key)
            full = full if full is not None else module.load(spec, data_dir, rebuild_cache)
            _LOADED[searcher_key] = replace(full, test_loss=None)
        return _LOADED[searcher_key]
    if memo_key not in _LOADED or rebuild_cache:
        _LOADED[memo_key] = module.load(spec, data_dir, rebuild_cache)
    return _LOADED[memo_key]


def load_test_losses(benchmark: Benchmark) -> Benchmark:
    """`benchmark` with its test losses: itself if it has them, else a new object (not memoised: the
    caller drops it) with them read from where the benchmark was loaded, checked against its checksum."""
    import importlib

    if benchmark.test_loss is not None:
        return benchmark
    module = importlib.import_module(get_spec(benchmark.name).loader)
    return replace(benchmark, test_loss=module.test_losses(benchmark))


def budget_in_clock_units(benchmark_name: str, budget_hours, budget_evals) -> float:
    """The budget per trial in the benchmark's clock units (hours, or evaluations); UserError (one
    line) for the other kind of budget than the benchmark's clock counts."""
    spec = get_spec(benchmark_name)
    if spec.counts:
        if budget_hours is not None:
            raise UserError(f"{benchmark_name} records no training time: its budget is a number of {spec.clock_label} "
                            f"(--budget-evals N, default {spec.default_budget:g}), not --budget-hours")
        return float(budget_evals if budget_evals is not None else spec.default_budget)
    if budget_evals is not None:
        raise UserError(f"{benchmark_name}'s clock is recorded training time: give --budget-hours "
                        f"(default {spec.default_budget:g}), not --budget-evals")
    return float(budget_hours if budget_hours is not None else spec.default_budget)
