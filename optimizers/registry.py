"""Registry of algorithm names: `nasbench list`, `--algo all` and the pairing with benchmarks.

One name, every benchmark: a name lists its variants ("module:Class"), and on a benchmark the first
variant whose `needs` (a class attribute: what it uses of a benchmark, see
`benchmarks.core.space.OFFERS`) the benchmark `offers` (its catalog entry) runs. So `re` is the
release's graph2vec evolution on ptb and wt2 and native-space evolution on bert, with the settings
each was tuned with there. A name none of whose variants fits is refused in one line that says what is
missing. The old bert-only names (`bert-re`, ...) are refused with their one name (`re`): one name per
algorithm everywhere, never a second row for the same code.

Entries are strings so that listing does not import xgboost, hyperopt or smac.
"""
import dataclasses
import json
import math
import importlib
import typing

from benchmarks.core.errors import UserError
from optimizers.labels import check_label

# name -> (one-line description, "module:Class" variants in order of preference)
ALGORITHMS = {
    "rs50e": ("random search, each architecture trained 50 epochs", ("optimizers.baselines.random_search:RandomSearch50",)),
    "rs10e": ("random search, each architecture trained 10 epochs", ("optimizers.baselines.random_search:RandomSearch10",)),
    "hb": ("Hyperband, R = 50 epochs, eta = 3, B = 200 epochs (Li et al.; the release: hb-release), promoted models continue from checkpoints", ("optimizers.multi_fidelity.hyperband:Hyperband",)),
    "asha": ("asynchronous successive halving, R = 50, eta = 3, grace 1 epoch, promotions from checkpoints", ("optimizers.multi_fidelity.asha:ASHA",)),
    "hb-release": ("Hyperband as the release's notebook: B = 100R/3.5, brackets drawn independently, run once", ("optimizers.multi_fidelity.hyperband:HyperbandRelease",)),
    "ahb": ("asynchronous Hyperband: ASHA in 4 brackets (grace 1, 3, 9, 27 epochs), syne-tune's bracket draw", ("optimizers.multi_fidelity.asha:AsyncHyperband",)),
    "bo10d": ("Bayesian optimisation, bagged XGBoost + LCB over 10-d graph2vec features", ("optimizers.model_based.bayesian:BO10d",)),
    "bo50d": ("Bayesian optimisation, bagged XGBoost + LCB over 50-d graph2vec features", ("optimizers.model_based.bayesian:BO50d",)),
    "re": ("regularized evolution: graph2vec noise mutation (P 20, S 10) on cells; native mutation, snapped (P 10, S 5) elsewhere",
           ("optimizers.evolution.regularized_evolution:RegularizedEvolution", "optimizers.evolution.regularized_evolution:SpaceRegularizedEvolution")),
    "tpe": ("hyperopt TPE: over the 50-d graph2vec box on cells; over the native space elsewhere; snapped to architectures",
            ("optimizers.model_based.tpe:TPE", "optimizers.model_based.tpe:SpaceTPE")),
    "smac": ("SMAC3 (HPO facade): over the 10-d graph2vec box on cells; over the native ConfigSpace elsewhere; snapped",
             ("optimizers.model_based.smac_search:SMAC", "optimizers.model_based.smac_search:SpaceSMAC")),
    "prs": ("proxy-guided random search: best of 10 by hidden covariance, trained 50 epochs", ("optimizers.training_free.proxy_random_search:ProxyRandomSearch",)),
    "phb": ("proxy-guided Hyperband: new architectures are the best by hidden covariance of 3x as many", ("optimizers.training_free.proxy_hyperband:ProxyHyperband",)),
    "lcbo": ("learning-curve-aware ASHA: rungs 1/2/9/50, promotion by a curve model fit online, proxy-filtered new cells", ("optimizers.training_free.lcbo:LearningCurveBO",)),
    "optuna": ("Optuna TPE: + Hyperband pruner over epochs in the 10-d graph2vec box on cells; define-by-run over the native space elsewhere (extra: libs)",
               ("optimizers.libraries.optuna_search:OptunaTPE", "optimizers.libraries.optuna_search:SpaceOptuna")),
    "dehb": ("DEHB (differential evolution + Hyperband) over epochs, 10-d graph2vec box (extra: libs)", ("optimizers.libraries.dehb_search:DEHBSearch",)),
    "smac-mf": ("SMAC3 multi-fidelity facade (Hyperband, BOHB-like) over epochs, 10-d graph2vec box", ("optimizers.libraries.smac_multifidelity:SMACMultiFidelity",)),
    "dpl": ("DPL (Kadra et al. 2023): an ensemble of networks predicting power-law learning curves, freeze-thaw by "
            "expected improvement at the full budget, one epoch a step (extra: proxies, for torch)",
            ("optimizers.learning_curve.dpl:DeepPowerLaw",)),
    "mobster": ("MOBSTER (Klein et al. 2020), independent GPs per rung: ASHA whose new architectures have the highest "
                "EI under the GP of the highest rung with enough results", ("optimizers.multi_fidelity.gp_asha:MOBSTER",)),
    "hypertune": ("Hyper-Tune (Li et al. 2022): asynchronous Hyperband whose new architectures have the highest EI under "
                  "an ensemble of per-rung GPs weighted by ranking loss, brackets drawn by the same weights",
                  ("optimizers.multi_fidelity.gp_asha:HyperTune",)),
    "dyhpo": ("DyHPO (Wistuba et al. 2022): a deep-kernel GP over configuration, budget and learning curve, "
              "multi-fidelity EI at the next epoch, one epoch a step (extra: proxies, for torch)",
              ("optimizers.learning_curve.dyhpo:DyHPO",)),
    "ftpfn": ("FT-PFN (Rakotoarison et al. 2024) through ifbo: in-context freeze-thaw, EI at the full budget, one epoch "
              "a step; needs its weights, --set ftpfn.weights=DIR (extra: ftpfn)", ("optimizers.learning_curve.ftpfn:FTPFNSearch",)),
    "top1e": ("one-epoch top-K: 27 random architectures trained 1 epoch, the best 3 continued to the full fidelity, "
              "repeated (Egele et al. 2023)", ("optimizers.baselines.one_epoch:OneEpochTopK",)),
    "st-rs": ("syne-tune RandomSearch at the full fidelity, in the feature box, snapped (extra: synetune)",
              ("optimizers.libraries.synetune_search:STRandomSearch",)),
    "st-bore": ("syne-tune BORE (density-ratio BO, Tiao et al. 2021) at the full fidelity, snapped (extra: synetune)",
                ("optimizers.libraries.synetune_search:STBORE",)),
    "st-kde": ("syne-tune TPE (kernel-density estimators) at the full fidelity, snapped (extra: synetune)",
               ("optimizers.libraries.synetune_search:STKDE",)),
    "st-rea": ("syne-tune regularized evolution at the full fidelity, snapped (extra: synetune)",
               ("optimizers.libraries.synetune_search:STREA",)),
    "st-asha": ("syne-tune ASHA (stopping), one result per epoch, grace 1, eta 3 (extra: synetune)",
                ("optimizers.libraries.synetune_search:STASHA",)),
    "st-bohb": ("syne-tune BOHB (ASHA + kernel densities), one result per epoch (extra: synetune)",
                ("optimizers.libraries.synetune_search:STBOHB",)),
    "st-asha-bore": ("syne-tune ASHA with a BORE model per rung, one result per epoch (extra: synetune)",
                     ("optimizers.libraries.synetune_search:STASHABORE",)),
    "rs": ("random search at the benchmark's full fidelity: 50 epochs on cells, the one evaluation on bert",
           ("optimizers.baselines.random_search:RandomSearch", "optimizers.baselines.random_search:SingleFidelityRandomSearch")),
    "bo": ("Bayesian optimisation, bagged XGBoost + LCB: over 10-d graph2vec on cells (= bo10d), over the space's encoding elsewhere",
           ("optimizers.model_based.bayesian:BO10d", "optimizers.model_based.bayesian:SpaceBO")),
    "mo-rs": ("multi-objective random search at the full fidelity (50 epochs on cells, the one evaluation on bert); needs --objectives",
              ("optimizers.multi_objective.algorithms:MORandomSearch", "optimizers.multi_objective.algorithms:SingleFidelityMORandomSearch")),
    "mo-asha": ("multi-objective ASHA (MOASHA): promotions by non-dominated sorting, R = 50, eta = 3; needs --objectives",
                ("optimizers.multi_objective.algorithms:MOASHA",)),
    "mo-re": ("multi-objective regularized evolution (MOREA): non-dominated tournaments; needs --objectives",
              ("optimizers.multi_objective.algorithms:MORegularizedEvolution", "optimizers.multi_objective.algorithms:SpaceMORegularizedEvolution")),
    "parego": ("ParEGO: bagged-XGBoost BO (as bo) on a random Chebyshev scalarisation drawn at each refit; needs --objectives",
               ("optimizers.multi_objective.algorithms:ParEGO", "optimizers.multi_objective.algorithms:SpaceParEGO")),
    "nsga2": ("Optuna NSGA-II over the native space, snapped (extra: libs); needs --objectives",
              ("optimizers.multi_objective.optuna_samplers:NSGA2",)),
    "motpe": ("Optuna multi-objective TPE over the native space, snapped (extra: libs); needs --objectives",
              ("optimizers.multi_objective.optuna_samplers:MOTPE",)),
    "st-moasha": ("syne-tune MOASHA (non-dominated sorting), one result per epoch (extra: synetune); needs --objectives",
                  ("optimizers.libraries.synetune_search:STMOASHA",)),
    "st-mo-rea": ("syne-tune multi-objective regularized evolution at the full fidelity (extra: synetune); needs --objectives",
                  ("optimizers.libraries.synetune_search:STMOREA",)),
    "mo-lcbo": ("multi-objective lcbo: rungs 1/2/9/50, non-dominated promotion of the curve model's prediction, "
                "new cells the best by hidden covariance of 16; needs --objectives", ("optimizers.multi_objective.algorithms:MOLearningCurveBO",)),
}
# old name -> (name, the benchmark it was made for): refused with the name to use (same code and settings)
ALIASES = {"bert-rs": ("rs", "bert"), "bert-bo": ("bo", "bert"), "bert-re": ("re", "bert"),
           "bert-tpe": ("tpe", "bert"), "bert-smac": ("smac", "bert"), "bert-optuna": ("optuna", "bert")}
PAPER_ALGORITHMS = ("rs50e", "rs10e", "hb", "bo10d", "bo50d", "re", "tpe", "smac")
PROXY_ALGORITHMS = ("prs", "phb")
LIBRARY_ALGORITHMS = ("optuna", "dehb", "smac-mf")
SYNETUNE_ALGORITHMS = ("st-rs", "st-bore", "st-kde", "st-rea", "st-asha", "st-bohb", "st-asha-bore", "st-moasha",
                       "st-mo-rea")
SPACE_ALGORITHMS = ("rs", "bo", "re", "tpe", "smac")     # --algo all on a benchmark searched in its native space
MULTI_OBJECTIVE_ALGORITHMS = ("mo-rs", "mo-asha", "mo-re", "parego", "nsga2", "motpe", "mo-lcbo")   # --algo mo (those a benchmark fits)


def available() -> list[str]:
    """Registered names whose module exists, in registry order."""
    return [name for name, (_, variants) in ALGORITHMS.items()
            if importlib.util.find_spec(variants[0].split(":")[0]) is not None]


def plugin_names() -> list[str]:
    """Names installed packages register (entry-point group `nasbench.optimizers`), built-in names
    excluded (a built-in name always means ours)."""
    from optimizers.plugins import entry_points

    return sorted(name for name in entry_points() if name not in ALGORITHMS and name not in ALIASES)


def is_builtin(name: str) -> bool:
    return name in ALGORITHMS or name in ALIASES


def _import(target: str):
    module_name, attr = target.split(":")
    return getattr(importlib.import_module(module_name), attr)


def _offers(benchmark: str) -> frozenset:
    from benchmarks.core.registry import get_spec

    return get_spec(benchmark).offers


def renamed(name: str) -> str:
    """The one line that refuses an old name (`bert-re`) with the algorithm's one name."""
    base, made_for = ALIASES[name]
    return f"'{name}' is an old name: use --algo {base} (on {made_for} it runs the same code and settings)"


def variant(name: str, benchmark: str | None = None) -> str:
    """The "module:Class" a built-in name runs on `benchmark` (None: its first variant; an alias: the
    variant of its benchmark); UserError (one line) if none fits."""
    if name in ALIASES:
        raise UserError(renamed(name))
    variants = ALGORITHMS[name][1]
    if benchmark is None:
        return variants[0]
    offers = _offers(benchmark)
    missing = []
    for target in variants:
        lacking = sorted(set(getattr(_import(target), "needs", frozenset())) - offers)
        if not lacking:
            return target
        missing.append(lacking)
    from benchmarks.core.space import OFFERS

    runnable = ", ".join(n for n in ALGORITHMS if _fits(n, offers))
    first = min(missing, key=len)
    raise UserError(f"{name} cannot run on {benchmark}: it needs {', '.join(first)} "
                    f"({'; '.join(OFFERS.get(m, m) for m in first)}), which {benchmark} does not offer; "
                    f"on {benchmark} use: {runnable}")


def _fits(name: str, offers: frozenset) -> bool:
    return any(set(getattr(_import(t), "needs", frozenset())) <= offers for t in ALGORITHMS[name][1])


def check_benchmark(name: str, benchmark: str) -> None:
    """UserError (one line) if the built-in algorithm `name` cannot run on `benchmark` (what it needs
    and the benchmark does not offer). Plugins are checked when built (`make_algorithm`)."""
    if is_builtin(name):
        variant(name, benchmark)


def required_offers(algorithm) -> set:
    """What an algorithm instance uses of a benchmark: its class's `needs`, plus what its settings
    name: graph2vec features (`features` = shipped-10d, g2v-10d, g2v-50d), a space's own encoding,
    training-free scores (`metric`)."""
    needs = set(getattr(type(algorithm), "needs", ()) or ())
    kind = algorithm.feature_kind
    if kind in ("shipped-10d", "g2v-10d", "g2v-50d"):
        needs.add("graph2vec")
    elif kind is not None:
        needs.add("encoding")
    if algorithm.score_metric is not None:
        needs.add("proxies")
    return needs


def check_offers(label: str, algorithm, benchmark: str) -> None:
    """UserError (one line) if `algorithm` (an instance with its settings) uses what `benchmark` does not offer."""
    from benchmarks.core.space import OFFERS

    lacking = sorted(required_offers(algorithm) - set(_offers(benchmark)))
    if lacking:
        raise UserError(f"{label} cannot run on {benchmark}: it needs {', '.join(lacking)} "
                        f"({'; '.join(OFFERS.get(m, m) for m in lacking)}), which {benchmark} does not offer "
                        "(its `needs` and its settings `features` / `metric` say what it uses)")


def parse_algo_list(text: str, benchmark: str | None = None) -> list[str]:
    """'all' (the paper's eight; on a benchmark without graph2vec, as bert, rs, bo, re, tpe, smac), 'proxy' (the proxy-guided ones), 'libs' (the
    library adapters), 'mo' (the multi-objective ones the benchmark fits) or a comma list of names, plugin names and plugin specs (module:Class,
    file.py:Class) -> algorithm keys (a spec made absolute); UserError for an unknown name, or for a
    built-in algorithm that cannot run on `benchmark` (when given)."""
    from optimizers.plugins import canonical_spec, is_plugin_spec

    native = benchmark is not None and "graph2vec" not in _offers(benchmark)
    groups = {"all": lambda: list(SPACE_ALGORITHMS if native else PAPER_ALGORITHMS),
              "proxy": lambda: list(PROXY_ALGORITHMS),
              "libs": lambda: ["optuna"] if native else list(LIBRARY_ALGORITHMS),
              # imports each multi-objective module to read its needs: only when 'mo' is asked for
              "mo": lambda: [n for n in MULTI_OBJECTIVE_ALGORITHMS if benchmark is None or _fits(n, _offers(benchmark))]}
    from benchmarks.core.names import canonical, did_you_mean

    known = set(available()) | set(ALIASES) | set(plugin_names())
    words = [synetune_name(t.strip()) for t in text.split(",") if t.strip()]
    # names match ignoring case (`HB` is hb) when that names one algorithm or group
    words = [w if w in known or w in groups or is_plugin_spec(w) else canonical(w, known | set(groups)) or w
             for w in words]
    names = [n for w in words for n in (groups[w]() if w in groups else [w])]
    names = [canonical_spec(n) if is_plugin_spec(n) else n for n in names]
    old = [n for n in names if n in ALIASES]
    if old:
        raise UserError(renamed(old[0]))
    unknown = [n for n in names if not is_plugin_spec(n) and n not in known]
    if unknown or not names:
        plugins = plugin_names()
        hint = did_you_mean(unknown[0], known | set(groups)) if unknown else ""
        raise UserError(f"unknown algorithm {', '.join(unknown) or repr(text)}{hint}; choose from: "
                        f"{', '.join(available() + plugins)}, 'all' (the paper's eight), 'proxy', 'libs', 'mo', "
                        "or a plugin as module:Class or path/to/file.py:Class (see `nasbench list`)")
    if benchmark is not None:
        for name in names:
            check_benchmark(name, benchmark)
    return list(dict.fromkeys(names))


# syne-tune's schedulers it no longer ships (its Gaussian-process searchers went in 0.14) that nasbench has
# written from their papers: `--algo synetune:NAME` runs nasbench's own, under its own name, and says so
SYNETUNE_BUILT_IN = {"dyhpo": "DyHPO", "hypertune": "Hyper-Tune", "mobster": "MOBSTER"}
# syne-tune's names of schedulers it no longer ships (0.16), and why: `--algo synetune:NAME` says so in one line
SYNETUNE_MISSING = {
    "ehvi": "EHVI needs botorch, which nasbench does not install",
    "botorch": "BoTorch needs botorch, which nasbench does not install",
    "cqr": "CQR imports syne-tune's blackbox repository (huggingface_hub and its HTTP stack)",
    "asha-cqr": "ASHA-CQR imports syne-tune's blackbox repository (huggingface_hub and its HTTP stack)",
}


def synetune_name(word: str) -> str:
    """`synetune:NAME` (any case, syne-tune's class name or ours: `synetune:BORE`, `synetune:asha-bore`) as the
    registry name `st-NAME`; UserError (one line) for a scheduler syne-tune 0.16 does not ship. Other words
    are returned unchanged."""
    name = _synetune_key(word)
    if name is None:
        return word
    if f"st-{name}" in SYNETUNE_ALGORITHMS:
        return f"st-{name}"
    offered = ", ".join(f"synetune:{n[3:]}" for n in SYNETUNE_ALGORITHMS)
    if name in SYNETUNE_BUILT_IN:
        return name
    if name in SYNETUNE_MISSING:
        raise UserError(f"{word}: {SYNETUNE_MISSING[name]}; syne-tune 0.16 offers: {offered}")
    raise UserError(f"{word}: not a syne-tune scheduler nasbench drives; choose from: {offered}")


def _synetune_key(word: str) -> str | None:
    """syne-tune's scheduler name in `synetune:NAME` (lower case, its class names mapped to ours), else None."""
    if not word.lower().startswith("synetune:"):
        return None
    name = word.split(":", 1)[1].strip().lower().replace("_", "-")
    return {"randomsearch": "rs", "random-search": "rs", "tpe": "kde", "ashabore": "asha-bore",
            "ashacqr": "asha-cqr", "morea": "mo-rea"}.get(name, name)


def synetune_substitutions(text: str) -> list[str]:
    """One note per `synetune:NAME` in an --algo text that runs nasbench's own algorithm instead."""
    notes = []
    for word in (w.strip() for w in text.split(",")):
        name = _synetune_key(word)
        if name in SYNETUNE_BUILT_IN:
            notes.append(f"{word}: {SYNETUNE_BUILT_IN[name]} was removed from syne-tune with its Gaussian-process "
                         f"searchers (0.14); running nasbench's own `{name}`, written from the paper, under that name")
    return notes


_LOADED: dict = {}     # algorithm key -> (class, source) of plugins loaded in this process


def algorithm_class(name: str, benchmark: str | None = None):
    """The class of a built-in name (its variant for `benchmark`), an installed plugin's name, or a
    plugin spec."""
    if is_builtin(name):
        return _import(variant(name, benchmark))
    return _plugin(name)[0]


def algorithm_source(name: str) -> dict | None:
    """Where a plugin's class came from (see optimizers.plugins); None for a built-in algorithm."""
    return None if is_builtin(name) else _plugin(name)[1]


def algorithm_name(name: str) -> str:
    """The name results are recorded and compared under: a built-in name itself; for a plugin its
    class's `name` attribute (or the class name). UserError if a plugin's name is a built-in's or
    cannot name a results folder."""
    if is_builtin(name):
        return name
    cls, source = _plugin(name)
    display = getattr(cls, "name", "") or cls.__name__
    if is_builtin(display):
        raise UserError(f"plugin '{source['spec']}' is named '{display}', a built-in algorithm's name: give its "
                        "class another `name`")
    try:
        return check_label(display)
    except UserError as error:
        raise UserError(f"plugin '{source['spec']}': its name {display!r} cannot name results: {error}") from None


def _plugin(name: str):
    if name not in _LOADED:
        from optimizers.plugins import load_class

        _LOADED[name] = load_class(name)
    return _LOADED[name]


def make_algorithm(name: str, overrides: dict | None = None, benchmark: str | None = None):
    """An algorithm instance with its default settings on `benchmark` (a setting `features` =
    "encoding" becomes the benchmark's own encoding kind), some replaced by `overrides` {field: text};
    UserError if a library it needs (`requires`: {module: how to install it}) is not installed, or if it
    cannot run on `benchmark` (when given)."""
    cls = algorithm_class(name, benchmark)
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
    kind_of_run = benchmark
    if getattr(settings, "features", None) == "encoding" and kind_of_run is not None:
        from benchmarks.core.registry import get_spec

        settings = dataclasses.replace(settings, features=get_spec(kind_of_run).encoding_kind)
    if kind_of_run is not None and "max_epochs" in {f.name for f in dataclasses.fields(settings)}:
        from benchmarks.core.registry import get_spec

        top = get_spec(kind_of_run).max_epochs     # R is the benchmark's top fidelity (50 on ptb and wt2)
        if top > 1 and settings.max_epochs != top:
            settings = dataclasses.replace(settings, max_epochs=top)
    if kind_of_run is not None and hasattr(cls, "adapt_settings"):   # e.g. lcbo's epochs-only mode
        from benchmarks.core.registry import get_spec

        settings = cls.adapt_settings(settings, get_spec(kind_of_run))
    full = getattr(cls, "full_fidelity_setting", None)      # e.g. rs, re on a native space: the full fidelity
    if kind_of_run is not None and full and getattr(settings, full, None) is not None:
        from benchmarks.core.registry import get_spec

        if getattr(settings, full) != get_spec(kind_of_run).max_epochs:
            settings = dataclasses.replace(settings, **{full: get_spec(kind_of_run).max_epochs})
    if overrides:
        fields = {f.name: f for f in dataclasses.fields(settings)}
        hints = typing.get_type_hints(type(settings))
        changes = {}
        for key, text in overrides.items():
            if key not in fields:
                raise UserError(f"{label} has no setting '{key}'; its settings: {', '.join(fields)}")
            changes[key] = _convert(label, key, text, hints.get(key, str))
        settings = dataclasses.replace(settings, **changes)
    check_setting_values(label, settings)
    if is_builtin(name):
        algorithm = cls(settings)
        if benchmark is not None:
            check_offers(label, algorithm, benchmark)        # e.g. --set features=g2v-10d on bert
        return algorithm
    try:
        algorithm = cls(settings)
        json.dumps(algorithm.settings_dict())      # recorded in every result file
    except Exception as exc:
        raise UserError(f"plugin {label} ({algorithm_source(name)['spec']}) could not be built with its settings: "
                        f"{type(exc).__name__}: {exc}") from None
    if benchmark is not None:
        check_offers(f"plugin {label}", algorithm, benchmark)
    return algorithm


def check_setting_values(label: str, settings) -> None:
    """UserError (one line) for a setting no result file can record faithfully: a float that is NaN or
    infinite, an integer outside 64 bits (the defaults of a plugin and the Python API's instances too)."""
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"setting {label}.{field.name} is {value}: settings must be finite numbers")
        if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
            raise UserError(f"setting {label}.{field.name} = {value} does not fit in 64 bits")


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
        if kind is int:
            value = int(text)
            if not -2**63 <= value < 2**63:          # numpy and the simulator take 64-bit integers
                raise ValueError(text)
            return value
        if kind is str:
            return text
        if typing.get_origin(kind) is typing.Union or type(kind).__name__ == "UnionType":
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            if text.lower() == "none":
                return None
            return args[0](text)
    except ValueError:
        what = "a finite float" if kind is float else "a 64-bit integer" if kind is int else getattr(kind, "__name__", kind)
        raise UserError(f"setting {algo}.{key} expects {what}, got '{text}'") from None
    return text
