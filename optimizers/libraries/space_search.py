"""The shared loop of libraries searching a benchmark's native space (`tpe`, `smac`, `optuna` off graph2vec).

A library proposes an architecture; it is snapped to the nearest untrained evaluated one
(`benchmarks.core.space.Snapper`, seeded tie order) and trained at the benchmark's full fidelity; the
library is told that architecture's validation loss for its own proposal. A trial ends when the budget
is spent or every evaluated architecture is trained.
"""
from optimizers.base import Algorithm, Job, SearchInputs


class NativeSpaceSearch(Algorithm):
    """Base class: subclasses implement `_begin`, `_propose`, `_report` and may implement `_abandon`."""
    needs = frozenset({"configspace", "encoding", "distance"})

    def start(self, inputs: SearchInputs) -> None:
        from optimizers.snapping import space_and_snapper

        self._space, self._snapper = space_and_snapper(inputs, self.name)
        self._epochs = inputs.search.max_epochs      # the full fidelity (bert: its one evaluation)
        self._pending: dict = {}                     # id(job) -> the library's handle of its proposal
        self._begin(inputs)

    def ask(self) -> Job | None:
        handle, arch = self._propose()
        row = self._snapper.snap(arch)
        if row is None:                              # every evaluated architecture is trained
            self._abandon(handle)
            return None
        job = Job(row, self._epochs)
        self._pending[id(job)] = handle
        return job

    def tell(self, job: Job, observation) -> None:
        self._report(self._pending.pop(id(job)), observation.last_val_loss)

    def _begin(self, inputs: SearchInputs) -> None:
        """Set the library up (after the snapper has drawn its tie order from `inputs.rng`)."""
        raise NotImplementedError

    def _propose(self):
        """(the library's handle of a new proposal, its architecture)."""
        raise NotImplementedError

    def _report(self, handle, loss: float) -> None:
        """Tell the library the validation loss of its proposal `handle` (NaN if not finite)."""
        raise NotImplementedError

    def _abandon(self, handle) -> None:
        """A proposal that could not be snapped (nothing left to train)."""
