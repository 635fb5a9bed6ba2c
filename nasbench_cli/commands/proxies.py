"""`nasbench proxies`: training-free scores of cells (score one, build the cached table, show it)."""
import click

from nasbench_cli.commands.options import cell_benchmark_option, data_dir_option, echo_json, json_option

METRIC_HELP = ("'all' or a comma list of: hidden_covariance_l1, hidden_covariance_l2, hidden_covariance_l3, "
               "activation_distance, jacobian_covariance, jacobian_cosine, synaptic_saliency, num_params.")


SPLIT_HELP = ("Corpus split of the minibatch: train (default: what search reads) or test (the authors' "
              "choice; for comparing with the published taus). Each split has its own cache.")


def _config_options(func):
    func = click.option("--split", type=click.Choice(["train", "test"]), default="train", show_default=True,
                        help=SPLIT_HELP)(func)
    func = click.option("--seq-len", type=click.IntRange(1, 1000), default=None,
                        help="Tokens per sequence of the minibatch (default 20).")(func)
    func = click.option("--batch-size", type=click.IntRange(2, 1024), default=None,
                        help="Sequences in the minibatch (default 32).")(func)
    func = click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
                        help="Seeds the weights and the minibatch.")(func)
    return func


def _require_torch():
    """UserError if PyTorch is not installed (found, not imported: a build with nothing left to score never
    loads it)."""
    import importlib.util

    from benchmarks.core.errors import UserError

    if importlib.util.find_spec("torch") is None:
        raise UserError("PyTorch is needed for training-free scores: pip install 'nasbench[proxies]' "
                        "(a CPU build is enough)")


def _read_recipe(path: str) -> dict:
    """A recipe from a JSON file: the cell dict itself, or a training log with its 'recepie' string."""
    import json

    from benchmarks.core.errors import UserError

    try:
        with open(path, encoding="utf-8") as handle:
            obj = json.load(handle)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read recipe file {path}: {exc}") from None
    if isinstance(obj, dict) and isinstance(obj.get("recepie"), str):
        try:
            obj = json.loads(obj["recepie"])
        except ValueError as exc:
            raise UserError(f"the 'recepie' string in {path} is not JSON: {exc}") from None
    return obj


@click.group()
def proxies():
    """Training-free metrics of recurrent cells (Serianni & Kalita, ACL 2023).

    Each cell is built into the NAS-Bench-NLP model (embedding 400, cells 600-600-400, tied
    decoder, dropouts off), initialised from --seed and run on one PTB test minibatch
    (default 32 sequences x 20 tokens, start positions from --seed). Needs PyTorch (CPU is fine).
    """


@proxies.command()
@click.option("--arch", "arch_id", type=int, default=None, help="recepie_id of a benchmark cell.")
@click.option("--recipe", "recipe_file", type=click.Path(dir_okay=False), default=None,
              help="JSON file with a cell {node: {op, input}} (or a training log with 'recepie').")
@click.option("--metric", "metric_text", default="all", show_default=True, help=METRIC_HELP)
@_config_options
@cell_benchmark_option
@data_dir_option
@json_option
def score(arch_id, recipe_file, metric_text, split, seed, batch_size, seq_len, benchmark_name, data_dir,
          as_json):
    """Score one cell now (not cached); prints each metric and the seconds it took."""
    from benchmarks.core.errors import UserError
    from benchmarks.proxies.build import parse_metrics

    if (arch_id is None) == (recipe_file is None):
        raise UserError("pass exactly one of --arch ID or --recipe FILE")
    metrics = parse_metrics(metric_text)
    from benchmarks.proxies import minibatch as mb
    from benchmarks.proxies.cell_graph import cell_graph

    info = {"benchmark": benchmark_name}
    if arch_id is not None:       # the cell first: a mistake there is one line before PyTorch loads (2-3 s)
        from benchmarks.core.registry import load_benchmark

        benchmark = load_benchmark(benchmark_name, data_dir)
        row = benchmark.search.index_of(arch_id)
        recipe = benchmark.search.recipe(row)
        info.update(arch=arch_id, num_params_log=int(benchmark.search.num_params[row]),
                    final_test_loss=_finite(benchmark.final_test_loss[row]))
    else:
        recipe = _read_recipe(recipe_file)
        cell_graph(recipe)
        info["recipe_file"] = recipe_file
    _require_torch()
    import torch
    from threadpoolctl import threadpool_limits

    from benchmarks.proxies.metrics import score_recipe

    torch.set_num_threads(1)
    corpus = mb.load_corpus(benchmark_name)
    with threadpool_limits(1):
        scores, seconds = score_recipe(recipe, corpus, metrics, seed=seed, batch_size=batch_size,
                                       seq_len=seq_len, split=split)
    info.update(seed=seed, split=split, batch_size=batch_size or mb.BATCH_SIZE, seq_len=seq_len or mb.SEQ_LEN,
                seconds=round(seconds, 3), scores={m: _finite(v) for m, v in scores.items()})
    if as_json:
        echo_json(info)
        return
    what = f"arch {arch_id}" if arch_id is not None else recipe_file
    click.echo(f"{what}: minibatch {info['batch_size']} x {info['seq_len']} {benchmark_name} {split} tokens, "
               f"seed {seed}, "
               f"{seconds:.2f} s on one thread")
    for metric, value in scores.items():
        click.echo(f"  {metric:<22} {value:.6g}")
    if "final_test_loss" in info and info["final_test_loss"] is not None:
        click.echo(f"  (final test loss in the log: {info['final_test_loss']:.4f})")


@proxies.command()
@click.option("--metric", "metric_text", default="all", show_default=True, help=METRIC_HELP)
@click.option("--sample", type=int, default=None,
              help="Score the first N cells of a fixed random order (a larger N extends a smaller one).")
@click.option("--all", "all_cells", is_flag=True, help="Score every cell.")
@click.option("--completed-only", is_flag=True,
              help="Only cells whose training completed (status OK, 50 epochs): the paper's population.")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes (one thread each).")
@click.option("--rescore", is_flag=True,
              help="Also score cells the package ships scores for (to reproduce the shipped table).")
@_config_options
@cell_benchmark_option
@data_dir_option
@json_option
def build(metric_text, sample, all_cells, completed_only, jobs, rescore, split, seed, batch_size, seq_len,
          benchmark_name, data_dir, as_json):
    """Score cells into the cached table (resumable: cells already cached are skipped).

    Finished cells are written every 20 cells; Ctrl-C or a kill keeps them, and running the same
    command again resumes. Cells whose score the package ships (hidden_covariance_l1 on train tokens,
    seed 0, 32 x 20, for ptb and wt2) are skipped unless --rescore. Optimizers read the cache, then
    the shipped table, with benchmarks.proxies.load_scores.
    """
    import sys
    import time

    from benchmarks.core.errors import UserError
    from benchmarks.proxies.build import parse_metrics, run_build, sample_rows
    from benchmarks.proxies.score_cache import ScoreCache

    if all_cells == (sample is not None):
        raise UserError("pass exactly one of --sample N or --all")
    metrics = parse_metrics(metric_text)
    _require_torch()
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir)
    rows = sample_rows(benchmark.search, None if all_cells else sample, completed_only)
    cache = ScoreCache(benchmark_name, seed, batch_size, seq_len, split=split)
    from benchmarks.core.blas_kernels import active_kernel, kernel_note

    if note := kernel_note():
        click.echo(f"note: {note}", err=True)
    start = time.monotonic()
    report = None
    with _Progress(quiet=as_json, interactive=sys.stderr.isatty()) as progress:
        try:
            report = run_build(benchmark, cache, metrics, rows, jobs=jobs, progress=progress.update,
                               shipped_too=not rescore)
        except KeyboardInterrupt as exc:
            done = getattr(exc, "report", None)
            kept = done.scored if done is not None else 0
            click.echo(f"interrupted: {kept} newly scored cells are kept in {cache.path}; "
                       "run the same command again to resume", err=True)
            raise
    cache.compact()
    import numpy as np

    seconds, cpu = np.array(report.seconds), np.array(report.cpu_seconds)
    summary = {
        "benchmark": benchmark_name, "metrics": list(metrics), "cells_requested": report.requested,
        "already_cached": report.already, "scored_now": report.scored, "failed": report.failed,
        "first_error": report.first_error or None,
        "median_seconds_per_cell": float(np.median(seconds)) if len(seconds) else None,
        "mean_seconds_per_cell": float(seconds.mean()) if len(seconds) else None,
        "median_cpu_seconds_per_cell": float(np.median(cpu)) if len(cpu) else None,
        "wall_seconds": round(time.monotonic() - start, 1), "jobs": jobs, "cache": str(cache.path),
        "blas_kernel": active_kernel(),
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"{report.requested} cells requested: {report.already} already cached or shipped, "
                   f"{report.scored} scored now, {report.failed} failed")
        if len(seconds):
            click.echo(f"seconds per cell: median {np.median(seconds):.2f} wall, {np.median(cpu):.2f} CPU "
                       f"({jobs} job(s), one thread each); total wall {summary['wall_seconds']} s")
        click.echo(f"cache: {cache.path}")
    if report.failed:
        click.echo(f"warning: {report.failed} cell(s) failed, first: {report.first_error}", err=True)
        raise SystemExit(1)


@proxies.command()
@_config_options
@cell_benchmark_option
@data_dir_option
@json_option
def status(split, seed, batch_size, seq_len, benchmark_name, data_dir, as_json):
    """How many cells the cached table holds per metric, and the measured seconds per score."""
    import numpy as np

    from benchmarks.proxies.metrics import METRICS
    from benchmarks.proxies.score_cache import ScoreCache, seconds_per_score
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir)
    cache = ScoreCache(benchmark_name, seed, batch_size, seq_len, split=split)
    table = cache.load()
    rows = {}
    for metric in METRICS:
        values = table.column(metric, benchmark.search.ids)
        rows[metric] = {"scored": table.count(metric), "finite": int(np.isfinite(values).sum()),
                        "seconds_per_score": round(seconds_per_score(benchmark, metric, seed, batch_size,
                                                                     seq_len, split), 3)}
    info = {"benchmark": benchmark_name, "split": split, "cells": benchmark.search.n, "cache": str(cache.path),
            "files": len(cache.files()), "seconds_per_score_all": round(
                seconds_per_score(benchmark, "all", seed, batch_size, seq_len, split), 3), "metrics": rows}
    if as_json:
        echo_json(info)
        return
    click.echo(f"cache {cache.path} ({info['files']} files), {benchmark.search.n:,} cells in '{benchmark_name}'")
    click.echo(f"{'metric':<22} {'scored':>7} {'finite':>7} {'CPU s/score':>11}")
    for metric, row in rows.items():
        click.echo(f"{metric:<22} {row['scored']:>7} {row['finite']:>7} {row['seconds_per_score']:>11.2f}")
    click.echo(f"CPU seconds per cell for all metrics in one pass: {info['seconds_per_score_all']:.2f}")


@proxies.command("check-params")
@click.option("--built", type=click.IntRange(0, 100000), default=300, show_default=True,
              help="Random cells whose PyTorch model is built and counted.")
@click.option("--sample-seed", type=int, default=0, show_default=True, help="Seed of that random choice.")
@cell_benchmark_option
@data_dir_option
@json_option
def check_params(built, sample_seed, benchmark_name, data_dir, as_json):
    """Check the network against the logs: parameter counts equal each log's num_params.

    The analytic count is checked on every cell, the built model's count on --built random cells
    (and the three baselines RNN, LSTM, GRU when present). Exit 1 if any differ.
    """
    import json

    import numpy as np

    from benchmarks.proxies.cell_graph import model_param_count
    from benchmarks.proxies.minibatch import load_corpus
    from benchmarks.core.registry import load_benchmark

    benchmark = load_benchmark(benchmark_name, data_dir)
    search = benchmark.search
    vocab = load_corpus(benchmark_name).vocab_size
    analytic = np.array([model_param_count(json.loads(r), vocab) for r in search.recipes])
    wrong_analytic = [int(i) for i in search.ids[analytic != search.num_params]]
    rng = np.random.default_rng(sample_seed)
    rows = list(rng.choice(search.n, size=min(built, search.n), replace=False))
    rows += [search.index_of(i) for i in (1000000, 1000001, 1000002) if i in set(search.ids.tolist())]
    wrong_built = []
    if rows:
        _require_torch()
        from benchmarks.proxies.network import RecipeLanguageModel, count_parameters

        for row in dict.fromkeys(int(r) for r in rows):
            model = RecipeLanguageModel(search.recipe(row), vocab)
            if count_parameters(model) != search.num_params[row] or count_parameters(model) != analytic[row]:
                wrong_built.append(int(search.ids[row]))
            del model
    info = {"benchmark": benchmark_name, "vocab_size": vocab, "cells": search.n,
            "analytic_checked": search.n, "analytic_differ": wrong_analytic,
            "built_checked": len(set(int(r) for r in rows)), "built_differ": wrong_built}
    if as_json:
        echo_json(info)
    else:
        click.echo(f"{benchmark_name}: vocabulary {vocab:,}; analytic count equals num_params for "
                   f"{search.n - len(wrong_analytic):,} of {search.n:,} cells; built model equals it for "
                   f"{info['built_checked'] - len(wrong_built)} of {info['built_checked']} cells")
        for rid in (wrong_analytic + wrong_built)[:20]:
            click.echo(f"  differs: {rid}")
    if wrong_analytic or wrong_built:
        raise SystemExit(1)


class _Progress:
    """A rich progress bar on a terminal; otherwise a log line every 50 cells (for nohup runs)."""

    def __init__(self, quiet: bool, interactive: bool):
        self.quiet, self.interactive = quiet, interactive
        self.bar = self.task = None
        self.start = None

    def __enter__(self):
        import time

        self.start = time.monotonic()
        if not self.quiet and self.interactive:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self.bar = Progress(TextColumn("scoring"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), transient=True)
            self.bar.__enter__()
        return self

    def update(self, done: int, total: int) -> None:
        import time

        if self.quiet:
            return
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task("scoring", total=total)
            self.bar.update(self.task, completed=done)
        elif done % 50 == 0 or done == total:
            elapsed = time.monotonic() - self.start
            rate = elapsed / max(done, 1)
            click.echo(f"scored {done}/{total} cells, {rate:.2f} s/cell, "
                       f"about {rate * (total - done) / 60:.0f} min left", err=True)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False


def _finite(value):
    import math

    return float(value) if value is not None and math.isfinite(value) else None

