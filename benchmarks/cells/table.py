"""NAS-Bench-NLP's training logs (ptb, wt2) as a benchmark table, through the packed cache.

The catalog's loader interface: `data_folder(data_dir)` (the release folder used),
`load(spec, data_dir, rebuild_cache)` (the Benchmark) and `test_losses(benchmark)` (its test losses,
read again for a benchmark loaded without them).
"""
from benchmarks.cells.log_reader import log_source
from benchmarks.cells.packed_cache import load_or_build
from benchmarks.core.errors import DataError
from benchmarks.core.paths import resolve_data_dir
from benchmarks.core.table import Benchmark, SearchTable


def data_folder(data_dir=None):
    """The NAS-Bench-NLP release folder: `data_dir`, else `NASBENCH_DATA`, else `../shared/nas-bench-nlp`."""
    return resolve_data_dir(data_dir)


def load(spec, data_dir=None, rebuild_cache: bool = False) -> Benchmark:
    """The benchmark `spec` (ptb or wt2) from its packed cache, built from the logs on first use."""
    from benchmarks.cells.space import CellSpace

    root = resolve_data_dir(data_dir)
    source = log_source(root / spec.logs)
    features_csv = None
    if spec.features_csv is not None and (root / spec.features_csv).is_file():
        features_csv = root / spec.features_csv    # optional: only `shipped-10d` readers need it
    arrays, cache_path = load_or_build(spec.name, source, features_csv, spec.max_epochs, rebuild=rebuild_cache)
    search = SearchTable(
        name=spec.name, ids=arrays["ids"], train_loss=arrays["train_loss"], val_loss=arrays["val_loss"],
        wall_time_s=arrays["wall_time_s"], n_epochs=arrays["n_epochs"], status=arrays["status"],
        num_params=arrays["num_params"], recipe_blob=arrays["recipe_blob"],
        recipe_offsets=arrays["recipe_offsets"], log_name_blob=arrays["log_name_blob"],
        log_name_offsets=arrays["log_name_offsets"], shipped_features=arrays.get("shipped_features"),
        features_extra_rows=int(arrays.get("features_extra_rows", 0)), space=CellSpace())
    return Benchmark(search=search, test_loss=arrays["test_loss"], data_dir=root, source=source,
                     checksum=str(arrays["checksum"]), cache_path=cache_path,
                     dropped_logs=tuple(str(x) for x in arrays["dropped_logs"]))


def test_losses(benchmark: Benchmark):
    """Test log-perplexities [n, max_epochs] read from the benchmark's packed cache alone; DataError if the
    cache changed since the benchmark was loaded (another checksum, another shape)."""
    import numpy as np

    from benchmarks.cells.packed_cache import array_digest

    try:
        with np.load(benchmark.cache_path, allow_pickle=False) as archive:
            checksum, loss = str(archive["checksum"]), archive["test_loss"]
            digest = str(archive["test_loss_digest"])
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"cannot read test losses from the cache {benchmark.cache_path}: {exc}") from None
    if checksum != benchmark.checksum or loss.shape != benchmark.search.val_loss.shape:
        raise DataError(f"the cache {benchmark.cache_path} changed while a run used it (another data "
                        "checksum); rerun the command")
    if array_digest({"test_loss": loss}, ["test_loss"]) != digest:
        raise DataError(f"the test losses in the cache {benchmark.cache_path} do not match their checksum (edited?); "
                        "delete the file, and the next command rebuilds it from the logs")
    return loss
