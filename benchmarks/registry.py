"""`load_benchmark`: a benchmark by name, from its packed cache."""
from benchmarks.catalog import BENCHMARKS, BenchmarkSpec
from benchmarks.errors import DataError, UserError
from benchmarks.log_reader import log_source
from benchmarks.packed_cache import load_or_build
from benchmarks.paths import resolve_data_dir
from benchmarks.table import Benchmark, SearchTable


_LOADED: dict = {}


def get_spec(name: str) -> BenchmarkSpec:
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark '{name}'; choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def load_benchmark(name: str = "ptb", data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """Load a benchmark from its packed cache (built from the logs on first use).

    `data_dir`: a folder with the NAS-Bench-NLP release layout; default `NASBENCH_DATA` or
    `../shared/nas-bench-nlp` beside the repository. Loads are memoised per process.
    """
    spec = get_spec(name)
    if spec.loader is not None:          # a benchmark with its own files and loader (bert)
        import importlib

        module = importlib.import_module(spec.loader)
        memo_key = (name, str(module.data_folder(data_dir)))
        if memo_key not in _LOADED or rebuild_cache:
            _LOADED[memo_key] = module.load(data_dir)
        return _LOADED[memo_key]
    root = resolve_data_dir(data_dir)
    memo_key = (name, str(root))
    if memo_key in _LOADED and not rebuild_cache:
        return _LOADED[memo_key]
    source = log_source(root / spec.logs)
    features_csv = None
    if spec.features_csv is not None:
        features_csv = root / spec.features_csv
        if not features_csv.is_file():
            raise DataError(f"features CSV not found: {features_csv}")
    arrays, cache_path = load_or_build(name, source, features_csv, spec.max_epochs, rebuild=rebuild_cache)
    search = SearchTable(
        name=name, ids=arrays["ids"], train_loss=arrays["train_loss"], val_loss=arrays["val_loss"],
        wall_time_s=arrays["wall_time_s"], n_epochs=arrays["n_epochs"], status=arrays["status"],
        num_params=arrays["num_params"], recipe_blob=arrays["recipe_blob"],
        recipe_offsets=arrays["recipe_offsets"], log_name_blob=arrays["log_name_blob"],
        log_name_offsets=arrays["log_name_offsets"], shipped_features=arrays.get("shipped_features"))
    benchmark = Benchmark(search=search, test_loss=arrays["test_loss"], data_dir=root, source=source,
                          checksum=str(arrays["checksum"]), cache_path=cache_path,
                          dropped_logs=tuple(str(x) for x in arrays["dropped_logs"]))
    _LOADED[memo_key] = benchmark
    return benchmark
