"""Regularized evolution (Real et al., 2019) in graph2vec feature space, as in the NAS-Bench-NLP release.

The first `population` architectures are drawn at random (without replacement) and trained `epochs`
epochs. Then, each step: a tournament of `sample` distinct members of the population is drawn, the
member with the lowest validation log-perplexity at `epochs` is the parent; the child is the parent's
feature vector plus Gaussian noise (std 0.5; if that snaps back to the parent, 1, 2, 4, then 8),
clipped to the bounding box of all feature vectors and snapped to the nearest architecture by cosine
distance; it is trained `epochs` epochs, joins the population, and the oldest member dies.

Fitness: a member whose run diverged (or whose validation loss is not finite) can never be a parent,
as in the release, which leaves such members out of the tournament (its code then indexes the
unfiltered sample with the argmin over the filtered scores, a slip not copied here). If every member
of a tournament diverged, the tournament is redrawn up to 5 times (the release's limit); after that
the first member drawn is the parent (the release abandons the trial there).

A child may be an architecture trained before (not the parent): as in the release it then joins the
population again with its known fitness, and nothing is trained or charged. `new_children_only=True`
instead keeps escalating the noise until the child is an untrained architecture and, if the largest
noise still lands on a trained one, snaps to the nearest untrained architecture.

Asynchronous, as in Real et al. (2019): a free worker breeds a child from the population as it is at
that moment. The first `population` asks hand out the random initial architectures; breeding starts
once all of them have been told (until then a free worker waits). An architecture handed to another
worker and not yet told counts as trained: a child that snaps onto it is discarded and bred again
(with one worker this never happens). With one worker the order of random draws, and so the
trajectory, is exactly the sequential algorithm's.
"""
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import Algorithm, Job, SearchInputs
from optimizers.snapping import nearest_by_cosine, unit_rows

TOURNAMENT_RETRIES = 5        # redraws of an all-diverged tournament (the release's limit)
MAX_STALE_STEPS = 100_000     # steps in a row that train nothing new: the reachable space is used up


class RegularizedEvolution(Algorithm):
    """One class for every space: with a graph2vec feature kind it mutates by noise in feature space
    and snaps by cosine (the release); with the space's own encoding (`features` = its
    `encoding_kind`) it mutates natively (`space.mutate`) and snaps by the space's distance."""
    name = "re"
    description = "regularized evolution in 10-d graph2vec space, population 20, tournament 10"
    needs = frozenset({"graph2vec"})
    _native = False                      # set by start(): mutate in the space's own encoding

    @dataclass(frozen=True)
    class Settings:
        features: str = "shipped-10d"   # the paper's 10-d graph2vec features
        population: int = 20            # P, members alive at a time
        sample: int = 10                # S, tournament size
        noise_stds: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)   # mutation noise stds, tried in order
        epochs: int = 50                # epochs each architecture is trained to
        new_children_only: bool = False   # True: a child is always an untrained architecture

        def __post_init__(self):
            # `--set noise_stds=0.5,1,2` arrives as text: store the canonical tuple of floats.
            object.__setattr__(self, "noise_stds", noise_stds(self.noise_stds))

    def check_table(self, search) -> None:
        _check_sizes(self.settings, search.n)

    def start(self, inputs: SearchInputs) -> None:
        settings = self.settings
        features = inputs.features
        n = inputs.search.n
        _check(settings, features, n)
        self._features, self._rng = features, inputs.rng
        self._stds = noise_stds(settings.noise_stds)
        self._epochs = int(settings.epochs)
        self._low, self._high = features.min(axis=0), features.max(axis=0)
        unit_rows(features)                      # normalise once, before the loop
        self._trained = np.zeros(n, dtype=bool)  # handed to a worker (told or not)
        self._initial = inputs.rng.choice(n, size=settings.population, replace=False).tolist()
        self._handed_out = 0                     # initial architectures handed to workers
        self._told = 0                           # jobs told
        self._stale = 0
        self._done = False
        self.fitness: dict[int, float] = {}
        # Kept on the instance for inspection (tests): the living population, every row in the order
        # it joined, and the parent of each child (members[population + k] is the child of parents[k]).
        self.population: deque = deque(maxlen=settings.population)
        self.members, self.parents = [], []
        space = getattr(inputs.search, "space", None)
        self._native = space is not None and settings.features == space.encoding_kind
        if self._native:                          # mutate in the space, snap by its distance
            from benchmarks.core.space import architectures
            from optimizers.snapping import space_and_snapper

            self._space, self._snapper = space_and_snapper(inputs, self.name)
            self._archs = architectures(inputs.search)
            self._snapper.trained = self._trained    # one mask: initial members count as trained

    def ask(self) -> Job | None:
        if self._handed_out < len(self._initial):
            row = self._initial[self._handed_out]
            self._handed_out += 1
            self._trained[row] = True
            return Job(row, self._epochs)
        if self._told < len(self._initial) or self._done:
            return None                           # the initial population is not complete yet
        trained, fitness = self._trained, self.fitness
        while self._stale < MAX_STALE_STEPS:
            parent = self._tournament(list(self.population), fitness, self._rng)
            child = self._mutate(self._features, parent, self._low, self._high, self._stds, trained, self._rng)
            if child is None:
                break                             # every architecture trained
            if trained[child] and child not in fitness:
                self._stale += 1                  # running on another worker: breed again
                continue
            self.parents.append(parent)
            if trained[child]:                    # known: joins again, nothing trained
                self._stale += 1
                self._join(child)
                continue
            self._stale = 0
            trained[child] = True
            return Job(child, self._epochs)
        self._done = True
        return None

    def tell(self, job: Job, observation) -> None:
        loss = observation.last_val_loss if observation.status == "OK" and observation.epochs == self._epochs \
            else math.inf
        self.fitness[job.arch] = loss if math.isfinite(loss) else math.inf
        self._told += 1
        self._join(job.arch)

    def _join(self, row: int) -> None:
        self.population.append(row)               # the oldest member (left end) dies when full
        self.members.append(row)

    def _tournament(self, members: list, fitness: dict, rng: np.random.Generator) -> int:
        size = min(self.settings.sample, len(members))
        for _ in range(TOURNAMENT_RETRIES + 1):
            picks = [members[k] for k in rng.permutation(len(members))[:size].tolist()]
            scores = [fitness[row] for row in picks]
            best = min(range(size), key=scores.__getitem__)
            if math.isfinite(scores[best]):
                return picks[best]
        return picks[0]

    def _mutate(self, features, parent, low, high, stds, trained, rng) -> int | None:
        """The child's row: noise on the parent's vector, escalating std until it snaps elsewhere; in
        the native space, the parent mutated and snapped to the nearest untrained evaluated row."""
        if self._native:
            return self._snapper.snap(self._space.mutate(self._archs[parent], rng), mark=False)
        vector = features[parent]
        child = parent
        for std in stds:
            candidate = rng.standard_normal(vector.shape[0])
            candidate *= std
            candidate += vector
            np.minimum(np.maximum(candidate, low, out=candidate), high, out=candidate)   # clip to the box
            child = nearest_by_cosine(features, candidate)
            if child != parent and not (self.settings.new_children_only and trained[child]):
                return child
        if self.settings.new_children_only:
            if trained.all():
                return None
            return nearest_by_cosine(features, candidate, exclude=trained)
        return child


def noise_stds(value) -> tuple[float, ...]:
    """The noise stds as floats; accepts a tuple or a comma list such as "0.5,1,2,4,8" (from --set)."""
    items = value.replace("(", "").replace(")", "").split(",") if isinstance(value, str) else value
    try:
        stds = tuple(float(item) for item in items if not (isinstance(item, str) and not item.strip()))
    except (TypeError, ValueError):
        raise UserError(f"re noise_stds must be a comma list of positive numbers, got {value!r}") from None
    if not stds or any(not s > 0 for s in stds):
        raise UserError(f"re noise_stds must be a comma list of positive numbers, got {value!r}")
    return stds


def _check(settings, features, n: int) -> None:
    if features is None or features.shape[0] != n:
        raise UserError("re needs a feature matrix with one row per architecture (setting 'features')")
    _check_sizes(settings, n)


def _check_sizes(settings, n: int) -> None:
    if not 1 <= settings.sample <= settings.population:
        raise UserError(f"re needs 1 <= sample <= population, got sample={settings.sample}, "
                        f"population={settings.population}")
    if settings.population > n:
        raise UserError(f"re population {settings.population} exceeds the {n} architectures")


class SpaceRegularizedEvolution(RegularizedEvolution):
    """`re` on a benchmark without graph2vec features: native mutation, snapped (population and
    tournament sized for ~50 evaluations, as NAS-Bench-BERT's budget allows)."""
    full_fidelity_setting = "epochs"   # trains to the benchmark's full fidelity (make_algorithm sets it)
    needs = frozenset({"mutate", "encoding", "distance"})

    @dataclass(frozen=True)
    class Settings:
        features: str = "encoding"      # the space's own encoding (snapping measures distance on it)
        population: int = 10            # P (of ~50 evaluations)
        sample: int = 5                 # S, tournament size
        noise_stds: tuple[float, ...] = (1.0,)   # unused in the native space (mutation is natural)
        epochs: int = 1
        new_children_only: bool = True  # always: a child is an untrained architecture
