"""The benchmarks nasbench knows, by name (light: no numpy, so the CLI can list them fast)."""
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    description: str
    logs: str                   # path of the logs zip inside the data folder
    features_csv: str | None    # path of the shipped graph2vec features, if any
    max_epochs: int = 50
    default_budget: float = 1000.0   # `nasbench run`'s default budget per trial, in clock units (hours or evaluations)
    feature_stand_ins: tuple = ()          # (kind, kind used instead) where the release ships no file
    single_fidelity: bool = False          # one evaluation per architecture (no epochs to stop early)
    objective: str = "log-perplexity"      # what the regret is measured in
    reach_thresholds: tuple = (0.1, 0.05)  # regrets whose first reaching `report` times, in that unit
    loader: str = "benchmarks.cells.table"  # module with data_folder(data_dir) and load(spec, data_dir, rebuild)
    offers: frozenset = frozenset()        # what the benchmark offers algorithms (benchmarks.core.space.OFFERS)
    encoding_kind: str = "encoding"        # the feature kind of its search space's own encoding
    objectives: tuple = ("logppl", "params", "flops", "epoch_s")   # benchmarks.core.objectives; the loss first
    clock: str = "hours"                   # what the simulated clock counts: "hours" (recorded training
    #                                        seconds), "evaluations" (no training time recorded: 1 per evaluation),
    #                                        "checkpoints" (curves without times: 1 per checkpoint trained) or
    #                                        "updates" (cost-aware: an evaluation costs its recorded training updates)

    @property
    def counts(self) -> bool:
        """True when the clock counts units (evaluations, checkpoints or training updates) rather than
        recorded hours; its budget is then `--budget-evals N`."""
        return self.clock != "hours"

    @property
    def clock_unit_s(self) -> float:
        """Clock seconds per displayed unit: 3600 (hours of recorded training time), or 1 (one evaluation,
        one checkpoint trained, or one training update)."""
        return 1.0 if self.counts else 3600.0

    @property
    def clock_label(self) -> str:
        """The x-axis and budget wording: 'simulated hours', 'evaluations', 'checkpoints' or 'training updates'."""
        return {"evaluations": "evaluations", "checkpoints": "checkpoints", "updates": "training updates"}.get(
            self.clock, "simulated hours")

    @property
    def clock_short(self) -> str:
        """The unit suffix in tables and --at grids: 'h', 'evals', 'ckpts' or 'updates'."""
        return {"evaluations": "evals", "checkpoints": "ckpts", "updates": "updates"}.get(self.clock, "h")


CELL_OFFERS = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace", "epochs",
                         "graph2vec", "proxies"})
FLEXIBERT_OFFERS = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace"})
GPT_OFFERS = FLEXIBERT_OFFERS
GPT_OBJECTIVES = ("perplexity", "params", "flops", "memory")

NMT_OFFERS = FLEXIBERT_OFFERS
NMT_OBJECTIVES = ("bleu", "decode_s", "memory", "params", "updates", "ppl")
NMT_PAIRS = {"en-ja": 168, "ja-en": 150, "ru-en": 176, "so-en": 604, "sw-en": 767, "zh-en": 118}
NMT_DEFAULT_BUDGET = 50
# each pair's median training updates to convergence (the `.evals` files' 4th column; a test checks them):
# the cost-aware variants' default budget is NMT_DEFAULT_BUDGET median systems' worth of updates
NMT_MEDIAN_UPDATES = {"en-ja": 446_000, "ja-en": 402_000, "ru-en": 44_000, "so-en": 34_000, "sw-en": 36_000,
                      "zh-en": 40_000}
NMT_COST_SUFFIX = "-updates"


def _nmt_spec(pair: str, systems: int, cost_aware: bool = False) -> BenchmarkSpec:
    """One of NMTHPO's language pairs (benchmarks.nmt): single evaluation; a clock that counts evaluations,
    or (`cost_aware`, `nmt-<pair>-updates`) one where an evaluation costs its recorded training updates."""
    spec = BenchmarkSpec(f"nmt-{pair}", f"NMTHPO {pair}: {systems} Transformer translation systems trained from "
                         "scratch (Sockeye), dev BLEU maximised, measured GPU decode time and memory; budget in "
                         f"evaluations (default {NMT_DEFAULT_BUDGET})", f"datasets/{pair}.evals", None, max_epochs=1,
                         default_budget=NMT_DEFAULT_BUDGET, single_fidelity=True, objective="BLEU points",
                         reach_thresholds=(1.0, 0.5), loader="benchmarks.nmt.table", offers=NMT_OFFERS,
                         encoding_kind="nmt-encoding", objectives=NMT_OBJECTIVES, clock="evaluations")
    if not cost_aware:
        return spec
    budget = NMT_DEFAULT_BUDGET * NMT_MEDIAN_UPDATES[pair]
    return replace(spec, name=f"nmt-{pair}{NMT_COST_SUFFIX}", default_budget=float(budget), clock="updates",
                   description=f"NMTHPO {pair} on a cost-aware clock: the systems of nmt-{pair}, each evaluation "
                               f"charged its recorded training updates; budget in updates (default {budget:,}: "
                               f"{NMT_DEFAULT_BUDGET} median systems)")


def _gpt_spec(size: str, count: str, shape: str, budget: int) -> BenchmarkSpec:
    """One of HW-GPT-Bench's spaces (benchmarks.gpt): single evaluation, a clock that counts evaluations."""
    return BenchmarkSpec(f"gpt-{size}", f"HW-GPT-Bench space {size}: {count} GPT-2-style decoders ({shape}), supernet "
                         f"perplexity on OpenWebText; budget in evaluations (default {budget})",
                         f"gpt_{size}_observations.jsonl", None, max_epochs=1, default_budget=budget,
                         single_fidelity=True, objective="perplexity", reach_thresholds=(0.2, 0.1),
                         loader="benchmarks.gpt.table",
                         offers=GPT_OFFERS, encoding_kind="gpt-encoding", objectives=GPT_OBJECTIVES,
                         clock="evaluations")


# Default budgets: on ptb the paper's 1000 h (3% of the 31,749 h it takes to train the whole table); on
# wt2 200 h, 10% of its 1,985 h (35 cells trained to 50 epochs): 3% would be 11 such cells, too few
# for the model-based searchers to leave their initial designs, and 1,985 h trains every cell.
# wt2 ships no graph2vec file: the paper's 10-d algorithms read our g2v-10d over the WT2 cells
# (only 108 of its 344 cells are PTB cells, so PTB's shipped vectors cannot be carried over).
BENCHMARKS = {
    "ptb": BenchmarkSpec("ptb", "NAS-Bench-NLP on Penn Treebank: 14,322 recurrent cells, 50 epochs; default budget 1000 h",
                         "train_logs_single_run/logs.zip", "data/doc2vec_features_lowdim.csv", offers=CELL_OFFERS,
                         encoding_kind="cell-encoding"),
    "wt2": BenchmarkSpec("wt2", ("NAS-Bench-NLP on WikiText-2: 345 logs of 344 cells, 50 epochs; default budget 200 h; "
                         "the 10-d algorithms read our g2v-10d (no shipped features)"),
                         "train_logs_wikitext-2/logs.zip", None, default_budget=200.0,
                         feature_stand_ins=(("shipped-10d", "g2v-10d"),), offers=CELL_OFFERS,
                         encoding_kind="cell-encoding"),
    "bert": BenchmarkSpec("bert", "NAS-Bench-BERT: 500 FlexiBERT transformers, GLUE average maximised; single "
                          "fidelity (one evaluation = time_to_train, no epochs); default budget 36 h (50 mean "
                          "evaluations)", "BERT_benchmark.json", None, max_epochs=1,
                          default_budget=36.0, single_fidelity=True, objective="GLUE points", reach_thresholds=(1.0, 0.5),
                          loader="benchmarks.flexibert.table", offers=FLEXIBERT_OFFERS,
                          encoding_kind="bert-encoding", objectives=("glue", "params", "train_s")),
    # HW-GPT-Bench (budgets in evaluations: no training time is recorded). Defaults: 100 supernet evaluations
    # on s and m (1% and 2% of their tables, enough for the model-based searchers, whose random start is 10,
    # to fit 90 times), 50 on l (12% of its 429, as bert's 50 of 500).
    **{f"gpt-{size}": _gpt_spec(size, count, shape, budget) for size, count, shape, budget in (
        ("s", "10,000", "embed 192-768, 10-12 layers", 100),
        ("m", "5,245", "embed 256-1024, 22-24 layers", 100),
        ("l", "429", "embed 320-1280, 34-36 layers", 50))},
    # NMTHPO (Zhang & Duh 2020): six language pairs, budgets in evaluations (no training time is recorded).
    # Default 50 evaluations on every pair: 7% (sw-en) to 42% (zh-en) of a table, the count gpt-l and bert
    # use, and enough for the model-based searchers to leave their random start (10-20 evaluations).
    **{f"nmt-{pair}": _nmt_spec(pair, systems) for pair, systems in NMT_PAIRS.items()},
}
# The same six tables on a cost-aware clock. The data records no wall time, so the default clock counts
# evaluations, as gpt-* do; here an evaluation is charged the training updates its system took to converge,
# a cost that differs 2.4-fold (so-en) to 13-fold (zh-en) between a pair's cheapest and dearest system.
# Not separate tasks: the suites leave them out (nasbench_cli.suites.definition).
BENCHMARKS.update({f"nmt-{pair}{NMT_COST_SUFFIX}": _nmt_spec(pair, systems, cost_aware=True)
                   for pair, systems in NMT_PAIRS.items()})
# NMTLC's LoRA fine-tuning of BLOOMZ and XGLM for translation (benchmarks.lora): checkpoints as the fidelity,
# dev perplexity as the signal; no time is recorded, so the clock counts checkpoints trained. Default budgets:
# about 10% of the checkpoints it takes to train every configuration to its last one (3,509 on fr-en,
# 2,430 on zh-en), as wt2's 200 h are 10% of its table.
LORA_OFFERS = frozenset({"sample", "mutate", "neighbours", "encoding", "distance", "configspace", "epochs"})
BENCHMARKS.update({
    f"lora-{pair}": BenchmarkSpec(
        f"lora-{pair}", f"NMTLC {pair}: {count} LoRA fine-tunings of BLOOMZ and XGLM (560M-3B) for translation, dev "
        f"perplexity per checkpoint (BLEU beside it), up to {top} checkpoints; budget in checkpoints (default {budget})",
        "nmtlc.jsonl", None, max_epochs=top, default_budget=budget, objective="perplexity",
        reach_thresholds=(0.1, 0.05), loader="benchmarks.lora.table", offers=LORA_OFFERS,
        encoding_kind="lora-encoding", objectives=("ppl",), clock="checkpoints")
    for pair, count, top, budget in (("fr-en", 162, 74, 350), ("zh-en", 159, 28, 250))})
# a family name selects all its benchmarks wherever a benchmark is named (`--benchmark nmt`)
FAMILIES = {"nmt": tuple(f"nmt-{pair}" for pair in NMT_PAIRS), "lora": ("lora-fr-en", "lora-zh-en"),
            "nmt-updates": tuple(f"nmt-{pair}{NMT_COST_SUFFIX}" for pair in NMT_PAIRS)}
FAMILY_PATTERNS = {"nmt": "nmt-*", "lora": "lora-*", "nmt-updates": f"nmt-*{NMT_COST_SUFFIX}"}   # in help texts
