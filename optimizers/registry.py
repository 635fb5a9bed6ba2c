"""Registry of algorithm names: `nasbench list` and `--algo all` read from here.

Entries point at "module:Class" so that listing does not import xgboost, hyperopt or smac.
"""
import dataclasses
import json
import math
import importlib
import typing

from benchmarks.errors import UserError

# name -> (one-line description, "module:Class")
ALGORITHMS = {
    "rs50e": ("random search, each architecture trained 50 epochs", "optimizers.random_search:RandomSearch50"),
    "rs10e": ("random search, each architecture trained 10 epochs", "optimizers.random_search:RandomSearch10"),
    "hb": ("Hyperband, R = 50 epochs, eta = 3, B = 200 epochs (Li et al.; the release: hb-release), promoted models continue from checkpoints", "optimizers.hyperband:Hyperband"),
    "asha": ("asynchronous successive halving, R = 50, eta = 3, grace 1 epoch, promotions from checkpoints", "optimizers.asha:ASHA"),
    "hb-release": ("Hyperband as the release's notebook: B = 100R/3.5, brackets drawn independently, run once", "optimizers.hyperband:HyperbandRelease"),
    "ahb": ("asynchronous Hyperband: ASHA in 4 brackets (grace 1, 3, 9, 27 epochs), syne-tune's bracket draw", "optimizers.asha:AsyncHyperband"),
    "bo10d": ("Bayesian optimisation, bagged XGBoost + LCB over 10-d graph2vec features", "optimizers.bayesian:BO10d"),
    "bo50d": ("Bayesian optimisation, bagged XGBoost + LCB over 50-d graph2vec features", "optimizers.bayesian:BO50d"),
    "re": ("regularized evolution in 10-d graph2vec space, population 20, tournament 10", "optimizers.evolution:RegularizedEvolution"),
    "tpe": ("hyperopt TPE over the box of 50-d graph2vec features, snapped to architectures", "optimizers.tpe:TPE"),
    "smac": ("SMAC3 (HPO facade) over the box of 10-d graph2vec features, snapped to architectures", "optimizers.smac_search:SMAC"),
    "prs": ("proxy-guided random search: best of 10 by hidden covariance, trained 50 epochs", "optimizers.proxy_random_search:ProxyRandomSearch"),
    "phb": ("proxy-guided Hyperband: new architectures are the best by hidden covariance of 3x as many", "optimizers.proxy_hyperband:ProxyHyperband"),
    "lcbo": ("learning-curve-aware ASHA: rungs 1/2/9/50, promotion by a curve model fit online, proxy-filtered new cells", "optimizers.lcbo:LearningCurveBO"),
    "optuna": ("Optuna TPE sampler + Hyperband pruner over epochs, 10-d graph2vec box (extra: libs)", "optimizers.optuna_search:OptunaTPE"),
    "dehb": ("DEHB (differential evolution + Hyperband) over epochs, 10-d graph2vec box (extra: libs)", "optimizers.dehb_search:DEHBSearch"),
    "smac-mf": ("SMAC3 multi-fidelity facade (Hyperband, BOHB-like) over epochs, 10-d graph2vec box", "optimizers.smac_multifidelity:SMACMultiFidelity"),
    "bert-rs": ("random search over the 500 NAS-Bench-BERT architectures (bert only)", "optimizers.bert_search:BertRandomSearch"),
    "bert-bo": ("bagged-XGBoost BO + LCB over the 38-number FlexiBERT encoding (bert only)", "optimizers.bert_search:BertBO"),
    "bert-re": ("regularized evolution, natural FlexiBERT mutation snapped by Hamming distance (bert only)", "optimizers.bert_search:BertRegularizedEvolution"),
    "bert-tpe": ("hyperopt TPE over the native FlexiBERT space, snapped by Hamming distance (bert only)", "optimizers.bert_search:BertTPE"),
    "bert-smac": ("SMAC3 HPO facade over the native FlexiBERT ConfigSpace, snapped by Hamming distance (bert only)", "optimizers.bert_search:BertSMAC"),
    "bert-optuna": ("Optuna TPE, define-by-run over the native FlexiBERT space, snapped by Hamming distance (bert only; extra: libs)", "optimizers.bert_search:BertOptuna"),
}
PAPER_ALGORITHMS = ("rs50e", "rs10e", "hb", "bo10d", "bo50d", "re", "tpe", "smac")
PROXY_ALGORITHMS = ("prs", "phb")
LIBRARY_ALGORITHMS = ("optuna", "dehb", "smac-mf")
BERT_ALGORITHMS = ("bert-rs", "bert-bo", "bert-re", "bert-tpe", "bert-smac")   # --algo all on bert
BERT_NAMES = BERT_ALGORITHMS + ("bert-optuna",)                                  # every bert-only one


def available() -> list[str]:
    """Registered names whose module exists, in registry order."""
    return [name for name, (_, target) in ALGORITHMS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None]


def plugin_names() -> list[str]:
    """Names installed packages register (entry-point group `nasbench.optimizers`), built-in names
    excluded (a built-in name always means ours)."""
    from optimizers.plugins import entry_points

    return sorted(name for name in entry_points() if name not in ALGORITHMS)


MULTI_FIDELITY = ("rs10e", "hb", "asha", "hb-release", "ahb", "phb", "lcbo", "optuna", "dehb", "smac-mf")


def check_benchmark(name: str, benchmark: str) -> None:
    """UserError (one line) if the built-in algorithm `name` cannot run on `benchmark`: the bert-*
    ones need the FlexiBERT space; the others search recurrent cells, and the multi-fidelity ones
    stop training early, which a single-fidelity benchmark cannot do. Plugins are not checked."""
    if name not in ALGORITHMS:
        return
    bert_names = ", ".join(BERT_ALGORITHMS)
    if name in BERT_NAMES and benchmark != "bert":
        raise UserError(f"{name} searches the FlexiBERT space: it runs on --benchmark bert only")
    if name not in BERT_NAMES and benchmark == "bert":
        if name in MULTI_FIDELITY:
            raise UserError(f"{name} is multi-fidelity (it stops training early by epochs), and bert has one "
                            f"evaluation per architecture (single fidelity); on bert use {bert_names} (--algo all)")
        raise UserError(f"{name} searches recurrent cells (graph2vec features); on bert use {bert_names} "
                        "(--algo all)")


def parse_algo_list(text: str, benchmark: str | None = None) -> list[str]:
    """'all' (the paper's eight; on bert the bert-* five), 'proxy' (the proxy-guided ones), 'libs' (the
    library adapters) or a comma list of names, plugin names and plugin specs (module:Class,
    file.py:Class) -> algorithm keys (a spec made absolute); UserError for an unknown name, or for a
    built-in algorithm that cannot run on `benchmark` (when given)."""
    from optimizers.plugins import canonical_spec, is_plugin_spec

    groups = {"all": list(BERT_ALGORITHMS if benchmark == "bert" else PAPER_ALGORITHMS),
              "proxy": list(PROXY_ALGORITHMS),
              "libs": ["bert-optuna"] if benchmark == "bert" else list(LIBRARY_ALGORITHMS)}
    names = [n for t in text.split(",") if t.strip() for n in groups.get(t.strip(), [t.strip()])]
    names = [canonical_spec(n) if is_plugin_spec(n) else n for n in names]
    known = set(available()) | set(plugin_names())
    unknown = [n for n in names if not is_plugin_spec(n) and n not in known]
    if unknown or not names:
        plugins = plugin_names()
        raise UserError(f"unknown algorithm {', '.join(unknown) or repr(text)}; choose from: "
                        f"{', '.join(available() + plugins)}, 'all' (the paper's eight), 'proxy', 'libs', "
                        "or a plugin as module:Class or path/to/file.py:Class (see `nasbench list`)")
    if benchmark is not None:
        for name in names:
            check_benchmark(name, benchmark)
    return list(dict.fromkeys(names))


_LOADED: dict = {}     # algorithm key -> (class, source) of plugins loaded in this process


def algorithm_class(name: str):
    """The class of a built-in name, an installed plugin's name, or a plugin spec."""
    if name in ALGORITHMS:
        module_name, attr = ALGORITHMS[name][1].split(":")
        return getattr(importlib.import_module(module_name), attr)
    return _plugin(name)[0]


def algorithm_source(name: str) -> dict | None:
    """Where a plugin's class came from (see optimizers.plugins); None for a built-in algorithm."""
    return None if name in ALGORITHMS else _plugin(name)[1]


def algorithm_name(name: str) -> str:
    """The name results are recorded and compared under: a built-in name itself; for a plugin its
    class's `name` attribute (or the class name). UserError if a plugin's name is a built-in's or
    cannot name a results folder."""
    if name in ALGORITHMS:
        return name
    cls, source = _plugin(name)
    display = getattr(cls, "name", "") or cls.__name__
    if display in ALGORITHMS:
        raise UserError(f"plugin '{source['spec']}' is named '{display}', a built-in algorithm's name: give its "
                        "class another `name`")
    from nasbench_cli.trial import check_label

    try:
        return check_label(display)
    except UserError as error:
        raise UserError(f"plugin '{source['spec']}': its name {display!r} cannot name results: {error}") from None


def _plugin(name: str):
    if name not in _LOADED:
        from optimizers.plugins import load_class

        _LOADED[name] = load_class(name)
    return _LOADED[name]


def make_algorithm(name: str, overrides: dict | None = None):
    """An algorithm instance with its default settings, some replaced by `overrides` {field: text};
    UserError if a library it needs (`requires`: {module: how to install it}) is not installed."""
    cls = algorithm_class(name)
    label = algorithm_name(name)
    for module, how in getattr(cls, "requires", {}).items():
        if importlib.util.find_spec(module) is None:
            raise UserError(f"{label} needs the '{module}' package: {how}")
    try:
        settings = cls.Settings()
    except Exception as exc:
        raise UserError(f"plugin {label}: its Settings() failed: {type(exc).__name__}: {exc}") from None
    if not dataclasses.is_dataclass(settings):
        raise UserError(f"plugin {label}: its Settings must be a dataclass (the fields --set changes)")
    if overrides:
        fields = {f.name: f for f in dataclasses.fields(settings)}
        hints = typing.get_type_hints(type(settings))
        changes = {}
        for key, text in overrides.items():
            if key not in fields:
                raise UserError(f"{label} has no setting '{key}'; its settings: {', '.join(fields)}")
            changes[key] = _convert(label, key, text, hints.get(key, str))
        settings = dataclasses.replace(settings, **changes)
    if name in ALGORITHMS:
        return cls(settings)
    try:
        algorithm = cls(settings)
        json.dumps(algorithm.settings_dict())      # recorded in every result file
    except Exception as exc:
        raise UserError(f"plugin {label} ({algorithm_source(name)['spec']}) could not be built with its settings: "
                        f"{type(exc).__name__}: {exc}") from None
    return algorithm


def _convert(algo, key, text, kind):
    if not isinstance(text, str):
        return text
    try:
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.lower() in ("true", "1", "yes")
        if kind is float:
            value = float(text)
            if not math.isfinite(value):
                raise ValueError(text)
            return value
        if kind in (int, str):
            return kind(text)
        if typing.get_origin(kind) is typing.Union or type(kind).__name__ == "UnionType":
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            if text.lower() == "none":
                return None
            return args[0](text)
    except ValueError:
        what = "a finite float" if kind is float else getattr(kind, "__name__", kind)
        raise UserError(f"setting {algo}.{key} expects {what}, got '{text}'") from None
    return text
