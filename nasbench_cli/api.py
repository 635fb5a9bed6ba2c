"""The Python API, imported as `import nasbench` (the module `nasbench.py` re-exports these names).

Everything a user needs is here under public names: load a benchmark, look up a learning curve,
make an environment, build an algorithm, run trials with K simulated workers, read results as a
pandas DataFrame, and plot them. The same code paths as the command line run underneath, so a trial
run here writes (with `out=`) the same result file `nasbench run` would.
"""
import dataclasses
from pathlib import Path

from benchmarks.core.environment import Environment, Observation
from benchmarks.core.errors import UserError
from benchmarks.core.registry import get_spec
from benchmarks.core.registry import load_benchmark as _load_benchmark
from optimizers.base import Algorithm, Job, SearchInputs, SequentialAlgorithm

__all__ = ["Algorithm", "SequentialAlgorithm", "Job", "SearchInputs", "Observation", "Environment", "UserError",
           "load_benchmark", "learning_curve", "make_environment", "algorithms", "make_algorithm", "run",
           "load_results", "trials_table", "plot_results", "suite_report"]


def load_benchmark(name: str = "ptb", data_dir=None):
    """A loaded benchmark ('ptb', 'wt2', 'bert', 'gpt-s', 'gpt-m' or 'gpt-l'; `nasbench list
    --benchmarks`): `.search` (the searcher's table: validation/train losses [n, max_epochs]
    (log-perplexity; bert: -GLUE; gpt-*: perplexity), wall time per epoch in seconds (none on gpt-*),
    status, recipes, its search space `.space`; no test losses), `.test_loss`, `.l_star`, `.best_id`.
    `data_dir`: the folder with that benchmark's files, not the shared folder itself: ptb, wt2: the
    NAS-Bench-NLP release (as ../shared/nas-bench-nlp); bert: as ../shared/training-free-nas; gpt-*:
    as ../shared/hw-gpt-bench. Default: $NASBENCH_DATA, $NASBENCH_BERT_DATA or $NASBENCH_GPT_DATA,
    else that folder in ../shared beside the repository."""
    return _load_benchmark(name, data_dir)


def learning_curve(benchmark, arch: int) -> dict:
    """The recorded learning curve of architecture `arch` (its recepie_id) as lists, one entry per
    recorded epoch: `val_logppl`, `test_logppl`, `train_logppl` (log-perplexity), `wall_time_s`
    (seconds per epoch), with `status` and `num_params`. On lora-* the curve as recorded, up to where
    early stopping ended it (the searcher's table pads it past there with its lowest perplexity)."""
    search = benchmark.search
    row = search.index_of(arch)
    epochs = int(search.n_epochs[row])
    if search.name.startswith("lora-"):
        from benchmarks.lora.table import curve_lengths

        epochs = int(curve_lengths(search)[row])

    def values(matrix):
        return [float(v) for v in matrix[row, :epochs]]

    return {"recepie_id": int(arch), "status": str(search.status[row]), "num_params": int(search.num_params[row]),
            "epochs": epochs, "val_logppl": values(search.val_loss), "test_logppl": values(benchmark.test_loss),
            "train_logppl": values(search.train_loss), "wall_time_s": values(search.wall_time_s)}


def make_environment(benchmark, budget_hours: float | None = None, budget_evals: int | None = None) -> Environment:
    """A simulated training environment on `benchmark`'s searcher table with a budget of `budget_hours`
    simulated hours (default: the benchmark's, as `nasbench run`): `env.train(row, epochs)` returns an Observation and charges the recorded wall time
    of the epochs it continues; `env.history` is the trajectory."""
    from benchmarks.core.registry import budget_in_clock_units

    budget = budget_in_clock_units(benchmark.name, budget_hours, budget_evals)
    return Environment(benchmark.search, budget * get_spec(benchmark.name).clock_unit_s)


def algorithms() -> dict:
    """{name: one-line description} of the built-in algorithms and installed plugins."""
    from optimizers.registry import ALGORITHMS, algorithm_class, available, plugin_names

    names = {name: ALGORITHMS[name][0] for name in available()}
    for name in plugin_names():
        try:
            names[name] = getattr(algorithm_class(name), "description", "") or "(plugin)"
        except UserError as error:
            names[name] = f"(plugin failed to load: {error})"
    return names


def make_algorithm(name: str, **settings) -> Algorithm:
    """A built-in algorithm, an installed plugin or a 'module:Class' / 'file.py:Class' spec, with some
    settings changed, e.g. `make_algorithm("hb", eta=4)`."""
    from optimizers.registry import make_algorithm as build

    return build(name, {key: value for key, value in settings.items()})


def run(algorithm, benchmark="ptb", trials: int = 10, budget_hours: float | None = None, workers: int = 1,
        seed: int = 0, label: str | None = None, out=None, data_dir=None, objectives=(), constraints=(),
        budget_evals: int | None = None, stop_at_best: bool = False) -> list[dict]:
    """Run `trials` trials (trial k seeded `seed + k`) of `algorithm` with `workers` simulated workers and
    a budget of `budget_hours` simulated hours each (gpt-*: `budget_evals` evaluations; default: the
    benchmark's), in this process; returns the result records (the
    fields of docs/reference/result-format.md). `algorithm`: an Algorithm instance (of a class defined anywhere,
    a notebook included), an Algorithm subclass (built with its default Settings), or a name/spec as
    for `make_algorithm`. `benchmark`: a name or a loaded benchmark. With `out`, each record is also
    written atomically to OUT/<benchmark>/<label>/trial-<k>.json, where `nasbench plot/report/check`
    read it; a file already there with other settings or code is an error, never overwritten.
    `objectives` ("logppl,params" or a list) and `constraints` (["params<=6e6"]): a multi-objective
    or constrained run, as `nasbench run --objectives/--constraint`. `stop_at_best`: end each trial once
    its incumbent is the table's best by validation, as `nasbench run --stop-at-best`."""
    from nasbench_cli.harness.trial import check_objectives_fit, check_problem
    from nasbench_cli.results.record import run_label, settings_hash
    from optimizers.registry import algorithm_name, algorithm_source, check_setting_values

    # by name: loaded without test losses, so none is in this process while the algorithm runs (the
    # trial reads them afterwards); a Benchmark object passed in is the caller's own
    bench = _load_benchmark(benchmark, data_dir, test_losses=False) if isinstance(benchmark, str) else benchmark
    if isinstance(algorithm, str):
        from optimizers.registry import make_algorithm as build_algorithm
        from optimizers.registry import parse_algo_list

        # as `--algo`: "did you mean" for a misspelt name, and no algorithm the benchmark cannot run
        names = parse_algo_list(algorithm, bench.name)
        if len(names) != 1:
            raise UserError(f"run() runs one algorithm; '{algorithm}' names {len(names)} ({', '.join(names)}): "
                            "call run() once for each")
        key = names[0]
        name, source, algorithm = algorithm_name(key), algorithm_source(key), build_algorithm(key, None, bench.name)
    else:
        if isinstance(algorithm, type) and issubclass(algorithm, Algorithm):
            algorithm = algorithm()
        if not isinstance(algorithm, Algorithm):
            raise UserError(f"run() needs an Algorithm instance or subclass, or a name; got {algorithm!r}")
        name, source = _object_name(algorithm), _object_source(algorithm)
        if dataclasses.is_dataclass(algorithm.settings):
            check_setting_values(name, algorithm.settings)
    from nasbench_cli.harness.run_description import describe_run

    description = describe_run([name], bench.name, trials=trials, seed=seed, budget_hours=budget_hours,
                               budget_evals=budget_evals, workers=workers, overrides={}, objectives=objectives,
                               constraints=constraints, label=label or run_label(name, workers), out=out,
                               data_dir=data_dir, stop_at_best=stop_at_best)
    check_objectives_fit(algorithm, name, description.objectives)
    import warnings

    if description.objectives or description.constraints:
        for note in check_problem(bench, description.objectives, description.constraints):
            warnings.warn(note, stacklevel=2)
    from benchmarks.core.blas_kernels import kernel_note

    if note := kernel_note():     # numpy loaded before nasbench (a notebook): not the float paths of `nasbench run`
        warnings.warn(note, stacklevel=2)
    expected = settings_hash(bench.name, name, algorithm.settings_dict(), description.budget_s, workers, None,
                             description.objectives, description.constraints)
    with _results_lock(out, bench.name):          # the CLI's lock: no concurrent run deletes our temp files
        if out is not None:
            from nasbench_cli.results.files import refuse_other_problem

            refuse_other_problem(out, bench.name, description.objectives, description.constraints)
        return _run_trials(description, bench, algorithm, name, source, expected)


def _results_lock(out, benchmark: str):
    from contextlib import nullcontext

    from nasbench_cli.harness.run_lock import run_lock

    return nullcontext() if out is None else run_lock(Path(out), benchmark)


def _run_trials(run, bench, algorithm, name, source, expected) -> list[dict]:
    """The trials of the RunDescription `run` for the algorithm instance `algorithm`, in this process."""
    from benchmarks.core.atomic import write_json_atomic
    from nasbench_cli.harness.trial import trial_record
    from nasbench_cli.results.files import read_trial, trial_path
    from optimizers.plugins import same_source

    records = []
    out, label, seed = run.out, run.label, run.seed
    for k in range(run.trials):
        path = trial_path(out, bench.name, label, k) if out is not None else None
        existing = read_trial(path) if path is not None else None
        if existing is not None:
            same = (existing.get("settings_hash"), existing.get("seed"), existing.get("data_checksum")) == \
                (expected, seed + k, bench.checksum) and same_source(existing.get("algorithm_source"), source)
            if not same and source is not None and source.get("sha256") is None:
                raise UserError(f"{path} exists, and {source['class']}'s source cannot be read (a class typed into "
                                "`python -`?), so resuming it cannot be checked; define it in a file, or use another out= or label=")
            if not same:
                raise UserError(f"{path} was made with other settings, code or data; use another out= or label=")
            records.append(existing)          # done before: resumed, not rerun
            continue
        record = trial_record(bench, algorithm, name, source, k, seed + k, run.budget_s, run.workers, label,
                              objectives=run.objectives, constraints=run.constraints,
                              stop_at_best=run.stop_at_best)
        if path is not None:
            write_json_atomic(path, record)
        records.append(record)
    return records


def load_results(*folders, benchmark: str | None = None, at_hours=None):
    """The trial records under results folders as a tidy pandas DataFrame (see docs/reference/result-format.md,
    "Exported tables"): one row per trial and finished job, or, with `at_hours` (e.g. [10, 100, 1000]),
    one row per trial and time point. Needs pandas (pip install 'nasbench[export]')."""
    from nasbench_cli.results.export import long_table
    from nasbench_cli.results.files import load_many

    results = load_many(folders, [benchmark] if benchmark else None)
    return long_table(results, at_hours)


def trials_table(*folders, benchmark: str | None = None):
    """One row per trial (label, seed, final regret, incumbent, compute seconds, ...) as a DataFrame."""
    from nasbench_cli.results.export import trials_table as table
    from nasbench_cli.results.files import load_many

    return table(load_many(folders, [benchmark] if benchmark else None))


def plot_results(*folders, out_dir="figures", formats=("png",)) -> list[Path]:
    """Write `nasbench plot`'s figures for the results under `folders` into `out_dir`; returns the files."""
    from nasbench_cli.figures.plotting import plot_benchmark
    from nasbench_cli.results.files import load_many

    results = load_many(folders)
    written = []
    for bench in results.benchmarks:
        written += plot_benchmark(bench, results.runs[bench], out_dir, tuple(formats))
    return written


def suite_report(suite: str, folder, algos=None, indicator: str = "hv", versus: str = "rs") -> dict:
    """`nasbench report --suite SUITE FOLDER --json` as a dict: per algorithm ("algorithms") the mean and IQM
    of normalised regret across the suite's tasks with 95% stratified-bootstrap intervals, its mean rank, and
    the probability of improvement over `versus` (`p_improvement`, over the tasks both ran; also over rs,
    `p_improvement_over_rs`); the anytime table, critical-difference results, overtuning, per-task means and
    notes. `suite`: dev, test, smoke or a suite file (.toml); `folder`: `run --suite`'s --out; `algos`: a
    list of labels to compare among (default every one there); `indicator`: hv, hv-range or igd+ for the
    multi-objective tasks."""
    from nasbench_cli.results.report_table import json_ready
    from nasbench_cli.results.suite_report import suite_report as report
    from nasbench_cli.suites.definition import load_suite

    if not str(versus).strip():
        raise UserError("versus needs an algorithm's label, e.g. versus='optuna'")
    return json_ready(report(load_suite(suite), Path(folder), list(algos) if algos else None, indicator,
                             str(versus).strip()))


def _object_name(algorithm) -> str:
    from nasbench_cli.results.record import check_label
    from optimizers.registry import ALGORITHMS

    name = getattr(algorithm, "name", "") or type(algorithm).__name__
    if name in ALGORITHMS and type(algorithm).__module__.split(".")[0] != "optimizers":
        raise UserError(f"{type(algorithm).__qualname__} is named '{name}', a built-in algorithm's name: "
                        "give the class another `name`")
    return check_label(name)


def _object_source(algorithm) -> dict | None:
    """Where an instance's class comes from (None for a built-in algorithm): its source file and helper
    files, or the class's source text (a notebook); `sha256` None where neither can be read."""
    from optimizers.plugins import class_provenance

    cls = type(algorithm)
    if cls.__module__.split(".")[0] == "optimizers":
        return None
    return {"kind": "python", "spec": None, "class": f"{cls.__module__}.{cls.__qualname__}", **class_provenance(cls)}
