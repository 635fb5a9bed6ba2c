"""Registry of algorithm names: `nasbench list` and `--algo all` read from here.

Entries point at "module:Class" so that listing does not import xgboost, hyperopt or smac.
"""
import dataclasses
import math
import importlib
import typing

from benchmarks.errors import UserError

# name -> (one-line description, "module:Class")
ALGORITHMS = {
    "rs50e": ("random search, each architecture trained 50 epochs", "optimizers.random_search:RandomSearch50"),
    "rs10e": ("random search, each architecture trained 10 epochs", "optimizers.random_search:RandomSearch10"),
    "hb": ("Hyperband, R = 50 epochs, eta = 3, promoted models continue from checkpoints", "optimizers.hyperband:Hyperband"),
    "asha": ("asynchronous successive halving, R = 50, eta = 3, grace 1 epoch, promotions from checkpoints", "optimizers.asha:ASHA"),
    "ahb": ("asynchronous Hyperband: ASHA in 4 brackets (grace 1, 3, 9, 27 epochs), syne-tune's bracket draw", "optimizers.asha:AsyncHyperband"),
    "bo10d": ("Bayesian optimisation, bagged XGBoost + LCB over 10-d graph2vec features", "optimizers.bayesian:BO10d"),
    "bo50d": ("Bayesian optimisation, bagged XGBoost + LCB over 50-d graph2vec features", "optimizers.bayesian:BO50d"),
    "re": ("regularized evolution in 10-d graph2vec space, population 20, tournament 10", "optimizers.evolution:RegularizedEvolution"),
    "tpe": ("hyperopt TPE over the box of 50-d graph2vec features, snapped to architectures", "optimizers.tpe:TPE"),
    "smac": ("SMAC3 (HPO facade) over the box of 10-d graph2vec features, snapped to architectures", "optimizers.smac_search:SMAC"),
    "prs": ("proxy-guided random search: best of 10 by hidden covariance, trained 50 epochs", "optimizers.proxy_random_search:ProxyRandomSearch"),
    "phb": ("proxy-guided Hyperband: new architectures are the best by hidden covariance of 3x as many", "optimizers.proxy_hyperband:ProxyHyperband"),
}
PAPER_ALGORITHMS = ("rs50e", "rs10e", "hb", "bo10d", "bo50d", "re", "tpe", "smac")
PROXY_ALGORITHMS = ("prs", "phb")


def available() -> list[str]:
    """Registered names whose module exists, in registry order."""
    return [name for name, (_, target) in ALGORITHMS.items()
            if importlib.util.find_spec(target.split(":")[0]) is not None]


def parse_algo_list(text: str) -> list[str]:
    """'all' (the paper's eight), 'proxy' (the proxy-guided ones) or a comma list of names -> names;
    UserError for an unknown one."""
    groups = {"all": list(PAPER_ALGORITHMS), "proxy": list(PROXY_ALGORITHMS)}
    names = [n for t in text.split(",") if t.strip() for n in groups.get(t.strip(), [t.strip()])]
    unknown = [n for n in names if n not in ALGORITHMS or n not in available()]
    if unknown or not names:
        raise UserError(f"unknown algorithm {', '.join(unknown) or repr(text)}; choose from: "
                        f"{', '.join(available())}, 'all' (the paper's eight) or 'proxy' (see `nasbench list`)")
    return list(dict.fromkeys(names))


def algorithm_class(name: str):
    if name not in ALGORITHMS:
        raise UserError(f"unknown algorithm '{name}'; see `nasbench list`")
    module_name, attr = ALGORITHMS[name][1].split(":")
    return getattr(importlib.import_module(module_name), attr)


def make_algorithm(name: str, overrides: dict | None = None):
    """An algorithm instance with its default settings, some replaced by `overrides` {field: text}."""
    cls = algorithm_class(name)
    settings = cls.Settings()
    if overrides:
        fields = {f.name: f for f in dataclasses.fields(settings)}
        hints = typing.get_type_hints(type(settings))
        changes = {}
        for key, text in overrides.items():
            if key not in fields:
                raise UserError(f"{name} has no setting '{key}'; its settings: {', '.join(fields)}")
            changes[key] = _convert(name, key, text, hints.get(key, str))
        settings = dataclasses.replace(settings, **changes)
    return cls(settings)


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
