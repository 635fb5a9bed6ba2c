"""Random search: architectures drawn uniformly without replacement, each trained a fixed number of epochs.

As in the NAS-Bench-NLP paper (`rs50e`, `rs10e`): the draw is over the whole benchmark, since a
searcher cannot know in advance which architectures will diverge. One permutation of the rows is
drawn up front (the same as drawing without replacement one at a time) and walked until the
simulated budget runs out or every architecture has been trained. Each free worker takes the next
architecture of the permutation, so K workers train K of them side by side (trivially parallel).
"""
from dataclasses import dataclass

from optimizers.base import Algorithm, Job, SearchInputs


class RandomSearch(Algorithm):
    """Random search with `settings.epochs` epochs per architecture."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    name = "rs"
    description = "random search, each architecture trained a fixed number of epochs"
    needs = frozenset({"epochs"})

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 50          # epochs each drawn architecture is trained to

    def start(self, inputs: SearchInputs) -> None:
        self._epochs = int(self.settings.epochs)
        self._order = iter(inputs.rng.permutation(inputs.search.n).tolist())

    def ask(self) -> Job | None:
        row = next(self._order, None)
        return None if row is None else Job(row, self._epochs)


class RandomSearch50(RandomSearch):
    full_fidelity_setting = None   # a fixed epoch count: refused on a table with fewer
    name = "rs50e"
    description = "random search, each architecture trained 50 epochs"

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 50          # epochs each drawn architecture is trained to


class RandomSearch10(RandomSearch):
    full_fidelity_setting = None   # a fixed epoch count: refused on a table with fewer
    name = "rs10e"
    description = "random search, each architecture trained 10 epochs"

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 10          # epochs each drawn architecture is trained to


class SingleFidelityRandomSearch(RandomSearch):
    """`rs` on a single-fidelity benchmark (bert): each draw is one whole evaluation."""
    name = "rs"
    description = "random search over a single-fidelity benchmark's evaluated architectures"
    needs = frozenset()

    @dataclass(frozen=True)
    class Settings:
        epochs: int = 1           # one evaluation per architecture
