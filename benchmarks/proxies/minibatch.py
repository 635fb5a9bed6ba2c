"""The language-model corpus behind a benchmark, its vocabulary, and the scoring minibatch.

The vocabulary is built as in AWD-LSTM's `data.Corpus`, which NAS-Bench-NLP trained with: words in
order of first appearance over train, valid and test, each line ending with `<eos>` (PTB: 10,000
words). A minibatch is `batch_size` windows of `seq_len` consecutive tokens of one split, their start
positions drawn from `numpy.random.default_rng(seed)`: shape [seq_len, batch_size] (time first).
"""
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from benchmarks.core.errors import DataError, UserError
from benchmarks.core.paths import REPO_ROOT

CORPUS_OF_BENCHMARK = {"ptb": "ptb", "wt2": "wikitext-2"}
SPLITS = ("train", "valid", "test")

# The scoring minibatch (see benchmarks/proxies/__init__.py for why these sizes). Search reads scores
# from training tokens (a searcher has no business reading test text); the authors' code drew the
# minibatch from the test split, which `--split test` keeps for comparing with the published taus.
BATCH_SIZE = 32
SEQ_LEN = 20
SPLIT = "train"
PUBLISHED_SPLIT = "test"
SCORING_SPLITS = ("train", "test")


def check_split(split: str) -> str:
    """`split` if it is a scoring split, else UserError."""
    if split not in SCORING_SPLITS:
        raise UserError(f"unknown scoring split '{split}'; choose one of: {', '.join(SCORING_SPLITS)}")
    return split


def corpora_dir() -> Path:
    """`NASBENCH_CORPORA`, else `../shared/corpora` beside the repository."""
    import os

    env = os.environ.get("NASBENCH_CORPORA")
    return Path(env).expanduser() if env else REPO_ROOT.parent / "shared" / "corpora"


@dataclass(frozen=True)
class Corpus:
    """Token ids of each split (int64 arrays) and the vocabulary (list of words, id order)."""
    name: str
    words: tuple
    splits: dict

    @property
    def vocab_size(self) -> int:
        return len(self.words)


@lru_cache(maxsize=4)
def load_corpus(benchmark: str = "ptb") -> Corpus:
    """The tokenised corpus a benchmark's models were trained on (cached per process)."""
    if benchmark == "bert":
        raise UserError("the training-free metrics here score recurrent cells; for bert's published scores "
                        "run `nasbench analyze proxies --benchmark bert`")
    if benchmark not in CORPUS_OF_BENCHMARK:
        raise UserError(f"no corpus known for benchmark '{benchmark}'; "
                        f"choose one of: {', '.join(CORPUS_OF_BENCHMARK)}")
    folder = corpora_dir() / CORPUS_OF_BENCHMARK[benchmark]
    index: dict = {}
    splits = {}
    for split in SPLITS:
        path = folder / f"{split}.txt"
        if not path.is_file():
            raise DataError(f"corpus file not found: {path}; set NASBENCH_CORPORA to a folder with "
                            f"{CORPUS_OF_BENCHMARK[benchmark]}/{{train,valid,test}}.txt")
        ids = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                for word in line.split() + ["<eos>"]:
                    ids.append(index.setdefault(word, len(index)))
        splits[split] = np.asarray(ids, dtype=np.int64)
    return Corpus(name=benchmark, words=tuple(index), splits=splits)


def minibatch(tokens: np.ndarray, seed: int, batch_size: int = BATCH_SIZE,
              seq_len: int = SEQ_LEN) -> np.ndarray:
    """int64 [seq_len, batch_size]: windows of `tokens` at start positions drawn with `seed`."""
    if batch_size < 2 or seq_len < 1:
        raise UserError(f"minibatch needs batch size >= 2 and sequence length >= 1, "
                        f"got {batch_size} x {seq_len}")
    if len(tokens) < seq_len + batch_size:
        raise UserError(f"corpus split too short ({len(tokens)} tokens) for {batch_size} x {seq_len}")
    rng = np.random.default_rng(seed)
    starts = rng.choice(len(tokens) - seq_len + 1, size=batch_size, replace=False)
    return np.stack([tokens[s:s + seq_len] for s in starts], axis=1)
