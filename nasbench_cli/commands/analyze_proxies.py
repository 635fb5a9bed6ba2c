"""`nasbench analyze proxies`: how the cached training-free scores rank cells against trained test loss."""
import click

from benchmarks.core.registry import BENCHMARKS
from nasbench_cli.commands.options import NameChoice, data_dir_option, echo_json, json_option


@click.command("proxies")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True, help="Scoring seed of the cached table to read.")
@click.option("--batch-size", type=click.IntRange(2, 1024), default=None, help="Minibatch of the table (default 32).")
@click.option("--seq-len", type=click.IntRange(1, 1000), default=None, help="Sequence length of the table (default 20).")
@click.option("--split", type=click.Choice(["train", "test"]), default="train", show_default=True,
              help="Corpus split of the table's minibatch, as built: train (what search reads; the default of "
                   "`proxies build`) or test (the authors' protocol, for comparing with the published taus).")
@click.option("--ablation/--no-ablation", default=True, show_default=True,
              help="Also the 10 cells x 10 seeds and 10 cells x 10 minibatches ablations "
                   "(computed on first use, about 400 CPU seconds, then cached).")
@click.option("--benchmark", "benchmark_name", type=NameChoice(sorted(set(BENCHMARKS) | {"bert"})), default="ptb",
              show_default=True, help="Which benchmark; bert: NAS-Bench-BERT's published scores against GLUE "
                                      "(BERT_results_activation.csv, 500 architectures; no cache needed); gpt-s/m/l: "
                                      "parameters, FLOPs and memory against the supernet perplexity.")
@data_dir_option
@json_option
def proxies(seed, batch_size, seq_len, split, ablation, benchmark_name, data_dir, as_json):
    """Kendall tau and Spearman rho of each metric against final test loss.

    Columns: on the paper's population (cells whose training completed: status OK and 50 epochs,
    metric finite) and on all scored cells; the same figures computed from the published per-cell
    values (RNN_results.csv, 8,794 cells); and, on the cells both tables hold (matched by log file
    name), the rank correlation between our values and the published ones. Negative tau: a higher
    score goes with a lower loss. Fill the table first with `nasbench proxies build`.
    """
    import time

    from benchmarks.core.errors import UserError
    from benchmarks.proxies import analysis
    from benchmarks.core.registry import load_benchmark
    from benchmarks.proxies.score_cache import ScoreCache, seconds_per_score, with_shipped

    if benchmark_name == "bert":
        _bert(as_json)
        return
    if benchmark_name.startswith("gpt-"):
        _gpt(benchmark_name, data_dir, as_json)
        return
    start = time.monotonic()
    benchmark = load_benchmark(benchmark_name, data_dir)
    cache = ScoreCache(benchmark_name, seed, batch_size, seq_len, split=split)
    table, shipped = with_shipped(cache.load(), benchmark, cache)     # the cache, then the package's tables
    build = _build_hint(benchmark, cache, split)
    if not len(table.ids):
        raise UserError(f"no scores for {benchmark_name} with this configuration (minibatch {cache.batch_size} x "
                        f"{cache.seq_len}, seed {cache.seed}, {split} tokens) in {cache.path} or shipped with the "
                        f"package; {build}")
    published = analysis.load_published() if benchmark_name == "ptb" else None
    rows = analysis.correlation_table(benchmark, table, published)
    missing = [row["metric"] for row in rows if row["scored"] == 0]
    result = {"benchmark": benchmark_name, "cache": str(cache.path), "shipped_metrics": shipped,
              "unscored_metrics": missing, "to_score_them": build if missing else None, "seed": cache.seed,
              "minibatch": [cache.batch_size, cache.seq_len], "split": split,
              "cpu_seconds_per_cell_all_metrics": seconds_per_score(benchmark, "all", seed, batch_size, seq_len,
                                                                    split),
              "paper_text": {"hidden_covariance_l1_tau": analysis.PAPER_TAU["hidden_covariance_l1"],
                             "other_metrics_tau_at_most": analysis.PAPER_MAX_OTHER_TAU},
              "metrics": rows}
    if ablation:
        result["ablation"] = {}
        for kind in ("weights", "minibatch"):
            if not as_json and not analysis.ablation_is_cached(benchmark, cache, kind):
                click.echo(f"ablation ({kind}): scoring 10 cells x 10 repeats with every metric, once (a few "
                           "minutes on 2 cores), then cached; --no-ablation skips it", err=True)
            with _progress(f"ablation ({kind})", as_json) as update:
                run = analysis.run_ablation(benchmark, cache, kind, progress=update)
            result["ablation"][kind] = {"cells": [int(i) for i in run["ids"]],
                                        "summary": analysis.ablation_summary(run), "file": run["path"]}
    result["seconds"] = round(time.monotonic() - start, 1)
    if as_json:
        echo_json(result)
        return
    _print_table(result)


def _build_hint(benchmark, cache, split: str) -> str:
    """What to run to score every metric of a sample of 1,000 cells, and about how long it takes."""
    from benchmarks.proxies.score_cache import seconds_per_score

    per_cell = seconds_per_score(benchmark, "all", cache.seed, cache.batch_size, cache.seq_len, split)
    options = "".join(f" --{name} {value}" for name, value, default in
                      (("seed", cache.seed, 0), ("batch-size", cache.batch_size, 32), ("seq-len", cache.seq_len, 20))
                      if value != default)
    return (f"score every metric of 1,000 cells with `nasbench proxies build --benchmark {benchmark.name} --sample 1000 "
            f"--split {split}{options} --jobs 2` (about {per_cell * 1000 / 3600:.1f} CPU hours at {per_cell:.2f} CPU s "
            "per cell)")


def _bert(as_json):
    from benchmarks.proxies.bert_analysis import TASKS, bert_correlations, load_bert_results

    result = bert_correlations(load_bert_results())
    if as_json:
        echo_json(result)
        return
    click.echo(f"NAS-Bench-BERT: {result['architectures']} architectures; rank correlation of each published "
               f"metric with the GLUE average (paper: parameter count tau {result['paper_params_tau']})")
    click.echo(f"{'':36s} {'GLUE average':>13s}  {'Kendall tau against each task':^55s}")
    click.echo(f"{'metric':36s} {'tau':>6s} {'rho':>6s}  " + " ".join(f"{t:>6s}" for t in TASKS))
    for row in sorted(result["metrics"], key=lambda r: -abs(r["glue"]["tau"] or 0)):
        tasks = " ".join(f"{_fmt(row['tasks'][t]):>6s}" for t in TASKS)
        click.echo(f"{row['metric']:36s} {_fmt(row['glue']):>6s} {_fmt(row['glue'], 'rho'):>6s}  {tasks}")
    click.echo("each task against the GLUE average: " +
               ", ".join(f"{t} {_fmt(c)}" for t, c in result["tasks"].items()))


def gpt_size_correlations(benchmark) -> dict:
    """Kendall tau and Spearman rho of parameters, FLOPs and memory (the training-free "proxies" any
    transformer has) against the supernet perplexity of every architecture of a gpt table."""
    from scipy import stats

    from benchmarks.core.objectives import architecture_values

    perplexity = benchmark.search.val_loss[:, 0]
    rows = []
    for name in ("params", "flops", "memory"):
        values = architecture_values(benchmark.search, name)
        tau = stats.kendalltau(values, perplexity)
        rho = stats.spearmanr(values, perplexity)
        rows.append({"metric": name, "tau": float(tau.statistic), "tau_p": float(tau.pvalue),
                     "rho": float(rho.statistic)})
    return {"benchmark": benchmark.name, "architectures": benchmark.search.n, "metrics": rows}


def _gpt(name, data_dir, as_json):
    from benchmarks.core.registry import load_benchmark

    result = gpt_size_correlations(load_benchmark(name, data_dir))
    if as_json:
        echo_json(result)
        return
    click.echo(f"{name}: {result['architectures']:,} architectures; rank correlation with the supernet perplexity "
               "(negative: larger, lower perplexity)")
    click.echo(f"{'metric':10s} {'tau':>7s} {'rho':>7s}")
    for row in result["metrics"]:
        click.echo(f"{row['metric']:10s} {row['tau']:+.3f}  {row['rho']:+.3f}")


def _fmt(corr, key="tau"):
    value = corr.get(key) if corr else None
    return "   -  " if value is None else f"{value:+.3f}"


def _print_table(result):
    click.echo(f"benchmark {result['benchmark']}, scores from {result['cache']} "
               f"(minibatch {result['minibatch'][0]} x {result['minibatch'][1]}, seed {result['seed']})")
    click.echo("rank correlation with final test loss (tau = Kendall, rho = Spearman; negative = higher "
               "score, lower loss)")
    head = (f"{'metric':<21} {'n pop':>6} {'tau':>6} {'rho':>6} | {'n all':>6} {'tau':>6} {'rho':>6} | "
            f"{'pub n':>5} {'tau':>6} {'rho':>6} | {'same n':>6} {'pub':>6} {'ours':>6} | {'ours~pub':>8}")
    click.echo(head)
    click.echo("-" * len(head))
    for r in result["metrics"]:
        pop, al = r["population"], r["all_scored"]
        pub = r.get("published_csv")
        same_p, same_o, vs = r.get("published_same_cells"), r.get("ours_same_cells"), r.get("ours_vs_published")
        click.echo(f"{r['metric']:<21} {pop['n']:>6} {_fmt(pop)} {_fmt(pop, 'rho')} | {al['n']:>6} {_fmt(al)} "
                   f"{_fmt(al, 'rho')} | {pub['n'] if pub else 0:>5} {_fmt(pub)} {_fmt(pub, 'rho')} | "
                   f"{same_o['n'] if same_o else 0:>6} {_fmt(same_p)} {_fmt(same_o)} | {_fmt(vs, 'rho'):>8}")
    paper = result["paper_text"]
    click.echo(f"paper's text: |tau| {paper['hidden_covariance_l1_tau']} for hidden covariance (layer 1) on "
               f"8,795 cells, at most {paper['other_metrics_tau_at_most']} for the older metrics.")
    click.echo("pop = completed cells (OK, 50 epochs); pub = published RNN_results.csv on its own cells; "
               "same = cells in both tables (pub and ours tau vs loss); ours~pub = Spearman rho between "
               "our and the published values.")
    click.echo(f"CPU seconds per cell (all metrics, one thread): {result['cpu_seconds_per_cell_all_metrics']:.2f}")
    if result["shipped_metrics"]:
        click.echo(f"shipped with the package (cells your cache lacks): {', '.join(result['shipped_metrics'])}")
    if result["unscored_metrics"]:
        click.echo(f"not scored yet: {', '.join(result['unscored_metrics'])}; to {result['to_score_them']}")
    for kind, block in result.get("ablation", {}).items():
        what = "weight seeds (minibatch fixed)" if kind == "weights" else "minibatches (weights fixed)"
        click.echo(f"\nablation: {len(block['cells'])} cells x 10 {what}")
        click.echo(f"{'metric':<21} {'within sd':>11} {'between sd':>11} {'ratio':>7} {'rank stab.':>10}")
        for s in block["summary"]:
            if s["within_sd"] is None:
                click.echo(f"{s['metric']:<21} {'(undefined on some cells)':>42}")
                continue
            ratio = "-" if s["ratio"] is None else f"{s['ratio']:.3f}"
            stab = "-" if s["rank_stability"] is None else f"{s['rank_stability']:+.3f}"
            click.echo(f"{s['metric']:<21} {s['within_sd']:>11.4g} {s['between_sd']:>11.4g} {ratio:>7} {stab:>10}")
        click.echo("within sd: spread over repeats of one cell (mean over cells); between sd: spread of the "
                   "cells' means; rank stab.: mean Kendall tau between two repeats' orderings of the cells.")
    click.echo(f"\ntook {result['seconds']} s")


class _progress:
    """A transient rich progress bar (nothing when printing JSON)."""

    def __init__(self, label, quiet):
        self.label, self.quiet, self.bar, self.task = label, quiet, None, None

    def __enter__(self):
        if not self.quiet:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                transient=True)
            self.bar.__enter__()
        return self.update

    def update(self, done, total):
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False
