"""`nasbench data`: inspect the benchmark data and its cache."""
import click

from nasbench_cli.commands.options import benchmark_option, data_dir_option, echo_json, json_option


@click.group()
def data():
    """Inspect a benchmark's data (ptb, wt2, bert, gpt-s/m/l, nmt-*, lora-*) and its packed cache."""


# benchmark name prefix -> (module, summary function, printer, what --verify checked): the benchmarks
# described in their own terms (the cell tables use `benchmark_summary` below)
NATIVE_SUMMARIES = {
    "bert": ("nasbench_cli.commands.bert_data", "bert_summary", "print_bert_summary",
             "no cache: the JSON files were read now"),
    "lora-": ("nasbench_cli.commands.lora_data", "lora_summary", "print_lora_summary",
              "no cache: the file was read and checked now"),
    "nmt-": ("nasbench_cli.commands.nmt_data", "nmt_summary", "print_nmt_summary",
             "no cache: the four files were read and checked now"),
    "gpt-": ("nasbench_cli.commands.gpt_data", "gpt_summary", "print_gpt_summary",   # cache keyed by the files'
             "the files' sha256 (recomputed now) and the cache's arrays match"),       # sha256, arrays by their own
}


def benchmark_summary(benchmark) -> dict:
    """Counts and facts of a loaded benchmark (the `data info` payload)."""
    import collections
    import math

    import numpy as np

    search = benchmark.search
    statuses = collections.Counter(str(s) for s in search.status)
    epochs = collections.Counter(int(e) for e in search.n_epochs)
    l_star = benchmark.l_star
    return {
        "benchmark": benchmark.name,
        "architectures": search.n,
        "status": dict(statuses.most_common()),
        "complete_logs": int((search.n_epochs == search.max_epochs).sum()),
        "epochs_recorded": {"max": search.max_epochs, "distribution_top": dict(epochs.most_common(5))},
        "l_star": l_star,
        "l_star_perplexity": math.exp(l_star),
        "best_arch": benchmark.best_id,
        "best_epoch": benchmark.best_epoch,
        "shipped_features": None if search.shipped_features is None else list(search.shipped_features.shape),
        "features_missing_rows": None if search.shipped_features is None
        else int(np.isnan(search.shipped_features).any(axis=1).sum()),
        "features_extra_rows": int(getattr(search, "features_extra_rows", 0)),
        "dropped_duplicate_logs": list(benchmark.dropped_logs),
        "data_dir": str(benchmark.data_dir),
        "source": str(benchmark.source),
        "checksum_sha256": benchmark.checksum,
        "cache_path": str(benchmark.cache_path),
    }


@data.command()
@benchmark_option
@data_dir_option
@json_option
@click.option("--rebuild-cache", is_flag=True, help="Rebuild the packed cache from the logs.")
@click.option("--verify", is_flag=True,
              help="Recompute the sha256 of the source files and compare it with the cache's (ptb, wt2: the cache "
                   "is otherwise trusted while each file keeps its path, size and mtime; its arrays are checked "
                   "against their own sha256 at every load, on every benchmark); exit 1 if they differ.")
def info(benchmark_name, data_dir, as_json, rebuild_cache, verify):
    """Architectures, statuses, epochs, L* and its architecture, data source, checksum and cache path."""
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir, rebuild_cache=rebuild_cache)
    native = next((entry for prefix, entry in NATIVE_SUMMARIES.items() if benchmark_name.startswith(prefix)), None)
    if native is not None:
        import importlib

        module_name, summary_name, printer_name, verified_line = native
        module = importlib.import_module(module_name)
        summary = getattr(module, summary_name)(benchmark)
        if verify:
            summary["verified"] = True
        echo_json(summary) if as_json else getattr(module, printer_name)(summary)
        if verify and not as_json:
            click.echo(f"verified         {verified_line}")
        return
    summary = benchmark_summary(benchmark)
    if verify:
        from benchmarks.cells.packed_cache import checksum

        features_csv = benchmark.data_dir / (benchmark_spec_features(benchmark_name) or "")
        extra = [features_csv] if benchmark_spec_features(benchmark_name) and features_csv.is_file() else []
        summary["verified"] = checksum(benchmark.source, extra) == benchmark.checksum
    if as_json:
        echo_json(summary)
        if verify and not summary["verified"]:
            raise click.exceptions.Exit(1)
        return
    s = summary
    click.echo(f"benchmark        {s['benchmark']}")
    click.echo(f"architectures    {s['architectures']:,}")
    click.echo("status           " + ", ".join(f"{k} {v:,}" for k, v in s["status"].items()))
    click.echo(f"complete logs    {s['complete_logs']:,} with all {s['epochs_recorded']['max']} epochs")
    click.echo(f"L*               {s['l_star']:.4f} test log-perplexity (perplexity {s['l_star_perplexity']:.1f}), "
               f"architecture {s['best_arch']} at epoch {s['best_epoch']}")
    if s["shipped_features"]:
        missing, extra = s["features_missing_rows"], s["features_extra_rows"]
        covered = "all architectures" if not missing else \
            f"{s['architectures'] - missing:,} architectures ({missing:,} have no row: shipped-10d readers refuse them)"
        click.echo(f"features         shipped graph2vec {s['shipped_features'][1]}-d for {covered}"
                   + (f"; {extra:,} rows for ids without a log ignored" if extra else ""))
    elif benchmark_spec_features(s["benchmark"]):
        click.echo("features         no features CSV in this folder (algorithms reading shipped-10d cannot run)")
    if s["dropped_duplicate_logs"]:
        click.echo(f"duplicates       {len(s['dropped_duplicate_logs'])} log(s) of an id already present, not used: "
                   + ", ".join(s["dropped_duplicate_logs"]))
    click.echo(f"source           {s['source']}")
    click.echo(f"sha256           {s['checksum_sha256']}")
    click.echo(f"cache            {s['cache_path']}")
    if verify:
        if s["verified"]:
            click.echo("verified         the source files' sha256 equals the cache's, and its arrays match their own")
        else:
            click.echo("verify failed    the source files changed since the cache was built (same path, size "
                       "and mtime); rerun with --rebuild-cache", err=True)
            raise click.exceptions.Exit(1)


def benchmark_spec_features(name: str):
    """The features CSV (relative to the data folder) that a benchmark's cache also covers, or None."""
    from benchmarks.core.registry import get_spec

    return get_spec(name).features_csv
