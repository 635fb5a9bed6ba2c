"""Everything a run's trials will read, checked in the parent before any worker starts.

Settings and plugin imports are checked when the algorithms are made; here: the features each
algorithm reads (built once and cached, so workers only read them) and the training-free scores of
the proxy-guided ones. A missing piece is one line naming the algorithm (UserError), never a
traceback from a worker; a partial score table is a note saying what to build for the rest.
"""
import numpy as np

from benchmarks.core.errors import UserError


def build_command(benchmark, metric: str, split: str) -> str:
    """The command that scores every cell of `benchmark` (cells already scored are skipped)."""
    where = "" if benchmark.name == "ptb" else f" --benchmark {benchmark.name}"
    from benchmarks.core.paths import default_data_dir

    data_dir = getattr(benchmark, "data_dir", None)
    custom = data_dir is not None and default_data_dir().resolve() != data_dir
    return (f"nasbench proxies build --metric {metric} --all --split {split}{where}"
            + (f" --data-dir {data_dir}" if custom else ""))


def check_scores(benchmark, label: str, algorithm) -> str | None:
    """UserError if `algorithm` reads training-free scores and none exist for `benchmark`; a note (one
    line) if only some cells have one (the others are never proposed), else None."""
    from nasbench_cli.harness.trial import load_scores

    metric = algorithm.score_metric
    if metric is None:
        return None
    scores = load_scores(benchmark, metric, algorithm.score_split)
    scored = int((~np.isnan(scores)).sum())
    command = build_command(benchmark, metric, algorithm.score_split)
    if not np.isfinite(scores).any():
        raise UserError(f"{label} reads '{metric}' scores ({algorithm.score_split} tokens) and none are cached "
                        f"or shipped for these {benchmark.search.n:,} cells of {benchmark.name}; run `{command}` "
                        "first")
    if scored < benchmark.search.n:
        return (f"{label} reads '{metric}' scores for {scored:,} of {benchmark.search.n:,} cells (shipped or "
                f"cached); the other {benchmark.search.n - scored:,} are never proposed until scored: `{command}`")
    return None


def check_features(benchmark, label: str, algorithm) -> None:
    """UserError naming the algorithm if the features it reads cannot be had for every cell."""
    from nasbench_cli.harness.trial import load_features

    if algorithm.feature_kind is None:
        return
    try:
        load_features(benchmark, algorithm.feature_kind)
    except UserError as exc:
        raise UserError(f"{label} reads {algorithm.feature_kind} features: {exc}") from None


def check_epoch_settings(algo: str, algorithm, search) -> None:
    """UserError (one line) for a setting that names more epochs than the table has (rs50e on a table of
    28 checkpoints): found now, not in a worker after other algorithms' trials were written."""
    settings = algorithm.settings_dict() if hasattr(algorithm, "settings_dict") else {}
    for key in ("epochs", "max_epochs"):
        value = settings.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > search.max_epochs:
            raise UserError(f"{algo} trains to {value} epochs ({key}), but {search.name} records at most "
                            f"{search.max_epochs}; use --set {algo}.{key}=N with N <= {search.max_epochs}, or 'rs'")


def check_fits_table(algo: str, algorithm, benchmark) -> None:
    """UserError (one line) if `algorithm` (made as `algo`) cannot search `benchmark`'s table: what it
    needs (epochs, scores, encodings) or a setting the table refutes."""
    from nasbench_cli.harness.simulator import searcher_view

    view = searcher_view(benchmark.search)
    algorithm.check_table(view)
    check_epoch_settings(algo, algorithm, view)


def check_algorithm_fits(algo: str, benchmark, objectives, overrides: dict | None = None) -> None:
    """UserError (one line) if algorithm `algo` (with `overrides`, {setting: text}) cannot run on
    `benchmark` with `objectives` (a tuple; empty for one objective): the per-algorithm part of the checks
    `run` makes before anything runs, also what `report --suite` uses to tell a task an algorithm could
    not run from one it was not run on."""
    from nasbench_cli.harness.trial import check_objectives_fit
    from optimizers.registry import make_algorithm

    algorithm = make_algorithm(algo, overrides, benchmark.name)
    check_objectives_fit(algorithm, algo, objectives)
    check_fits_table(algo, algorithm, benchmark)
