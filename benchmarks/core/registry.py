"""`load_benchmark`: a benchmark by catalog name, through the loader module its catalog entry names."""
from benchmarks.core.catalog import BENCHMARKS, BenchmarkSpec
from benchmarks.core.errors import UserError
from benchmarks.core.table import Benchmark


_LOADED: dict = {}


def get_spec(name: str) -> BenchmarkSpec:
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark '{name}'; choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def load_benchmark(name: str = "ptb", data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """A loaded benchmark by catalog name ('ptb', 'wt2', 'bert'), memoised per process.

    `data_dir`: the folder holding that benchmark's files (ptb and wt2: the NAS-Bench-NLP release
    layout, e.g. `../shared/nas-bench-nlp`; bert: the NAS-Bench-BERT files, e.g.
    `../shared/training-free-nas`); default: the benchmark's environment variable, else its folder
    in `../shared` beside the repository. The catalog entry names the loader module.
    """
    import importlib

    spec = get_spec(name)
    module = importlib.import_module(spec.loader)
    memo_key = (name, str(module.data_folder(data_dir)))
    if memo_key not in _LOADED or rebuild_cache:
        _LOADED[memo_key] = module.load(spec, data_dir, rebuild_cache)
    return _LOADED[memo_key]
