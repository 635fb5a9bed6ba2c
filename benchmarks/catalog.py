"""The benchmarks nasbench knows, by name (light: no numpy, so the CLI can list them fast)."""
from dataclasses import dataclass


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    description: str
    logs: str                   # path of the logs zip inside the data folder
    features_csv: str | None    # path of the shipped graph2vec features, if any
    max_epochs: int = 50


BENCHMARKS = {
    "ptb": BenchmarkSpec("ptb", "NAS-Bench-NLP on Penn Treebank: 14,322 recurrent cells, 50 epochs",
                         "train_logs_single_run/logs.zip", "data/doc2vec_features_lowdim.csv"),
    "wt2": BenchmarkSpec("wt2", "NAS-Bench-NLP on WikiText-2: 345 logs of 344 cells, 50 epochs",
                         "train_logs_wikitext-2/logs.zip", None),
}
