"""`nasbench features`: build and inspect the architecture feature caches (graph2vec)."""
import click

from nasbench_cli.commands.options import benchmark_option, data_dir_option, echo_json, json_option


@click.group()
def features():
    """Build and inspect architecture features (shipped graph2vec, our graph2vec g2v-10d/g2v-50d)."""


def _parse_dims(text: str) -> list[int]:
    try:
        dims = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers such as 10,50, got {text!r}") from None
    if not dims or any(d < 1 or d > 1024 for d in dims):
        raise click.BadParameter(f"dimensions must be integers in 1..1024, got {text!r}")
    return dims


@features.command()
@benchmark_option
@click.option("--dims", default="10,50", show_default=True,
              help="Comma-separated embedding dimensions to build (g2v-10d and g2v-50d are 10 and 50).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Doc2Vec seed; optimizers read seed 0.")
@click.option("--rebuild", is_flag=True, help="Rebuild even if a valid cache file exists.")
@data_dir_option
@json_option
def build(benchmark_name, dims, seed, rebuild, data_dir, as_json):
    """Build our graph2vec features of every architecture and cache them (prints time and path)."""
    import time

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from benchmarks.core.features import g2v_cache_path, g2v_features, is_g2v_cached
    from benchmarks.core.registry import load_benchmark

    dim_list = _parse_dims(dims)
    if benchmark_name == "bert":
        from benchmarks.core.errors import UserError

        raise UserError("graph2vec embeds recurrent cells; bert's algorithms read the FlexiBERT encoding "
                        "(feature kind bert-encoding, computed on use: nothing to build)")
    benchmark = load_benchmark(benchmark_name, data_dir)
    from benchmarks.core.blas_kernels import kernel_note

    if note := kernel_note():
        click.echo(f"note: {note}", err=True)
    results = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} epochs"),
                  TimeElapsedColumn(), disable=as_json, transient=False) as bar:
        for dim in dim_list:
            started, cpu_started = time.perf_counter(), time.process_time()
            path = g2v_cache_path(benchmark, dim, seed)
            built = rebuild or not is_g2v_cached(benchmark, dim, seed)
            task = bar.add_task(f"graph2vec {benchmark.name} {dim}-d", total=None) if built else None

            def progress(done, total, task=task):
                if task is not None:
                    bar.update(task, completed=done, total=total)

            matrix = g2v_features(benchmark, dim, seed, rebuild=rebuild, progress=progress)
            results.append({"dims": dim, "seed": seed, "shape": list(matrix.shape), "built": built,
                            "time_s": round(time.perf_counter() - started, 2),
                            "cpu_s": round(time.process_time() - cpu_started, 2), "path": str(path)})
    if as_json:
        echo_json({"benchmark": benchmark.name, "features": results})
        return
    for r in results:
        how = "built" if r["built"] else "already cached"
        click.echo(f"g2v {r['dims']}-d seed {r['seed']}: {how}, shape {r['shape'][0]}x{r['shape'][1]}, "
                   f"{r['time_s']:.1f} s ({r['cpu_s']:.1f} s CPU) -> {r['path']}")


@features.command()
@benchmark_option
@data_dir_option
@json_option
def info(benchmark_name, data_dir, as_json):
    """Which feature kinds are available and cached, their shapes and cache paths."""
    from benchmarks.core.features import feature_cache_info
    from benchmarks.core.registry import load_benchmark

    summary = feature_cache_info(load_benchmark(benchmark_name, data_dir))
    if as_json:
        echo_json(summary)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"features of {summary['benchmark']}")
    for column in ("kind", "state", "shape", "path"):
        table.add_column(column, overflow="fold")
    for kind, entry in summary["kinds"].items():
        if entry.get("stands_in"):
            state = f"none shipped: {entry['stands_in']} stands in"
        elif not entry["available"]:
            state = "not available"
        elif entry["cached"]:
            state = "cached"
        elif entry.get("corrupt"):
            state = "corrupt (rebuilt on next use)"
        else:
            state = "not built (nasbench features build)"
        shape = "x".join(str(s) for s in entry["shape"]) if entry["shape"] else "-"
        table.add_row(kind, state, shape, entry["path"] or "-")
    Console().print(table)
