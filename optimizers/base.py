"""The interface every NAS algorithm implements.

An algorithm is a class with a `Settings` dataclass (its defaults are the paper's) and a
`run(inputs)` loop that calls `inputs.env.train(arch, epochs)` until the environment raises
`BudgetExhausted` (the runner catches it) or the search space is used up. It sees only the
searcher's view (`env.search`: validation/train losses, wall times, status, recipes) and, if its
settings name a feature kind, the feature matrix; test losses never reach it.
"""
import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from benchmarks.environment import Environment


@dataclass(frozen=True)
class SearchInputs:
    """What the runner hands an algorithm for one trial."""
    env: Environment
    rng: np.random.Generator          # seeded from the trial's seed
    seed: int                         # the trial's seed, for libraries that take an int
    features: np.ndarray | None       # [n_arch, d] rows aligned with env.search, or None
    scores: np.ndarray | None = None  # [n_arch] training-free scores (NaN unscored, -inf degenerate) or None


class Algorithm:
    """Base class: subclasses set `name`, `description`, `Settings` and implement `run`."""
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    @dataclass(frozen=True)
    class Settings:
        pass

    def __init__(self, settings=None):
        self.settings = settings if settings is not None else self.Settings()

    @property
    def feature_kind(self) -> str | None:
        """The feature kind this algorithm reads (`settings.features`), or None."""
        return getattr(self.settings, "features", None)

    @property
    def score_metric(self) -> str | None:
        """The training-free metric this algorithm reads (`settings.metric`), or None."""
        return getattr(self.settings, "metric", None)

    def run(self, inputs: SearchInputs) -> None:
        raise NotImplementedError

    def settings_dict(self) -> dict:
        return dataclasses.asdict(self.settings)
