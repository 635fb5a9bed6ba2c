"""FT-PFN: in-context freeze-thaw search (Rakotoarison et al., "In-Context Freeze-Thaw Bayesian
Optimization for Hyperparameter Optimization", ICML 2024) through the `ifbo` package, with weights the
user provides.

ifbo downloads FT-PFN's weights (a pretrained transformer, `ifbo.download.VERSION_MAP`) from figshare on
first use; nasbench never downloads anything, so the weights must already be on disk: a folder holding
ifbo's `.model/` (the `ftpfnv0.0.1.tar.gz` archive and the unpacked
`bopfn_broken_unisep_1000curves_10params_2M.pt`), made on any machine with internet by
`python -c "from ifbo import FTPFN; FTPFN(target_path='DIR')"`. Give it with `--set ftpfn.weights=DIR`
or `NASBENCH_FTPFN_WEIGHTS=DIR`; without it the run is refused in one line that says this.

The model takes learning curves in context and predicts, for any (configuration, budget), a distribution
over the curve's value there, without training. Its input limits and what the adapter does about them:
- **at most 10 hyperparameters in [0, 1]**: the features named by `features` (the shipped 10-d graph2vec
  on cells; the space's encoding elsewhere: 5 numbers on lora-*), scaled per dimension to [0, 1]; a matrix
  wider than 10 is reduced to its first 10 principal components (then scaled);
- **at most 1,000 curves in context**: those trained furthest (ties: most recent);
- **values in [0, 1], higher better**: validation loss mapped as (1 - headroom) (high - loss) / (high - low)
  with low and high the lowest and highest finite losses paid for so far: the worst at 0, the best at
  1 - `headroom` (0.1), so that the model can predict values above the best (with the best at 1, the top
  of FT-PFN's range, every expected improvement is 0: measured with a model of FT-PFN's kind, every
  candidate's EI was 0.0 and the search fell back on the order of the candidates);
- **budgets in [0, 1]**: epochs / max_epochs.

The search (freeze-thaw, as `dpl`): `initial` random architectures one epoch each; then each free worker
takes, among the started unfinished architectures and `pool` unseen ones, the one with the highest
expected improvement at the full budget (ifbo's `PredictionResult.ei` over the best value paid for so far)
and trains it `step_epochs` further. ifBO itself samples a random horizon and threshold for a probability
of improvement; EI at the full budget is ours, as for dpl. Needs torch and ifbo (extra `ftpfn`).
"""
import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.core.errors import UserError
from optimizers.base import SearchInputs
from optimizers.learning_curve.freeze_thaw import FreezeThawSearch

WEIGHTS_ENV = "NASBENCH_FTPFN_WEIGHTS"
MAX_HYPERPARAMETERS = 10      # FT-PFN 0.0.1: "1000curves_10params"
MAX_CURVES = 1000
WEIGHTS_FILES = {"0.0.1": ("ftpfnv0.0.1.tar.gz", "bopfn_broken_unisep_1000curves_10params_2M.pt")}  # ifbo's .model/
WHERE_TO_GET = ("FT-PFN's weights are downloaded by ifbo from figshare (https://figshare.com/articles/dataset/"
                "IfBO_surrogate-compressed/31286173), which nasbench never does: on a machine with internet run "
                "python -c \"from ifbo import FTPFN; FTPFN(target_path='DIR')\", copy DIR here and pass "
                f"--set ftpfn.weights=DIR (or {WEIGHTS_ENV}=DIR)")


class FTPFNSearch(FreezeThawSearch):
    full_fidelity_setting = "max_epochs"
    name = "ftpfn"
    description = ("FT-PFN (Rakotoarison et al. 2024) through ifbo: in-context freeze-thaw, EI at the full budget, "
                   "one epoch a step; needs its weights (--set ftpfn.weights=DIR)")
    needs = frozenset({"epochs"})
    requires = {"ifbo": "pip install -e '.[ftpfn]' (ifbo 0.4, with torch from the extra proxies)"}
    location_settings = ("weights",)     # where the weights are is not part of the result (what they are is)

    def settings_dict(self) -> dict:
        """The settings, and the SHA-256 of the weights file (`weights_sha256`; None when none is given):
        results made with other weights are never filed, resumed or reported as the same run."""
        return {**super().settings_dict(), "weights_sha256": weights_digest(self.settings)}

    @dataclass(frozen=True)
    class Settings:
        weights: str = ""               # folder holding ifbo's .model/ (or NASBENCH_FTPFN_WEIGHTS)
        version: str = "0.0.1"          # ifbo's model version
        features: str = "shipped-10d"   # the configuration FT-PFN sees (the space's encoding off cells)
        initial: int = 4                # random architectures trained one epoch before the model is asked
        step_epochs: int = 1
        pool: int = 100                 # unseen architectures among the candidates of each decision
        max_epochs: int = 50            # the full budget (the benchmark's: make_algorithm sets it)
        headroom: float = 0.1           # the best loss so far maps to 1 - headroom of FT-PFN's [0, 1]

    @classmethod
    def adapt_settings(cls, settings, spec):
        """Off recurrent cells (no graph2vec), the configuration is the space's own encoding."""
        from dataclasses import replace

        if "graph2vec" not in spec.offers and settings.features == cls.Settings().features:
            return replace(settings, features=spec.encoding_kind)
        return settings

    def check_table(self, search) -> None:
        weights_folder(self.settings)

    def start(self, inputs: SearchInputs) -> None:
        import torch

        s = self.settings
        if min(s.initial, s.step_epochs, s.pool) < 1 or s.max_epochs < 2:
            raise UserError("ftpfn needs initial, step_epochs, pool >= 1 and max_epochs >= 2")
        if not 0.0 < s.headroom < 1.0:
            raise UserError(f"ftpfn needs 0 < headroom < 1 (the best loss maps to 1 - headroom), got {s.headroom}")
        if inputs.features is None:
            raise UserError("ftpfn needs features (setting 'features')")
        torch.set_num_threads(1)
        self._surrogate = load_surrogate(weights_folder(s), s.version)
        self._x = hyperparameters(np.asarray(inputs.features, dtype=np.float64))
        self._begin(inputs)

    def _ready(self) -> bool:
        return bool(np.isfinite(self._curves).any())

    def _scores(self, rows: np.ndarray) -> np.ndarray:
        return self.expected_improvement(rows)

    def expected_improvement(self, rows: np.ndarray) -> np.ndarray:
        """FT-PFN's EI at the full budget for `rows`, given the curves paid for (the context)."""
        import torch
        from ifbo.utils import Curve

        s = self.settings
        finite = self._curves[np.isfinite(self._curves)]
        low, high = float(finite.min()), float(finite.max())
        span = high - low if high > low else 1.0

        def value(loss):      # FT-PFN's scale: the worst loss so far 0, the best (or a loss alone) 1 - headroom
            return np.clip((1.0 - s.headroom) * (low + span - loss) / span, 0.0, 1.0)

        started = np.flatnonzero(self._trained > 0)
        keep = started[np.lexsort((-self._last_told[started], -self._trained[started]))][:MAX_CURVES]
        context = []
        for row in keep:
            values = self._curves[row, :self._trained[row]]
            epochs = np.flatnonzero(np.isfinite(values))
            if not len(epochs):
                continue
            y = value(values[epochs])
            context.append(Curve(hyperparameters=torch.tensor(self._x[row], dtype=torch.float32),
                                 t=torch.tensor((epochs + 1) / s.max_epochs, dtype=torch.float32),
                                 y=torch.tensor(y, dtype=torch.float32)))
        query = [Curve(hyperparameters=torch.tensor(self._x[row], dtype=torch.float32),
                       t=torch.tensor([1.0], dtype=torch.float32)) for row in rows]
        best = torch.tensor(float(value(low)), dtype=torch.float32)
        results = self._surrogate.predict(context=context, query=query)
        return np.array([float(result.ei(best).reshape(-1)[0]) for result in results])


def hyperparameters(features: np.ndarray) -> np.ndarray:
    """`features` [n, d] as FT-PFN's hyperparameters [n, <= 10] in [0, 1]: the first 10 principal
    components when d > 10, each column scaled to [0, 1] (a constant column: 0)."""
    x = np.nan_to_num(features)
    if x.shape[1] > MAX_HYPERPARAMETERS:
        centred = x - x.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        x = centred @ vt[:MAX_HYPERPARAMETERS].T
    low, high = x.min(axis=0), x.max(axis=0)
    return np.where(high > low, (x - low) / np.where(high > low, high - low, 1.0), 0.0)


def weights_folder(settings) -> Path:
    """The folder of FT-PFN's weights (setting `weights`, else NASBENCH_FTPFN_WEIGHTS); UserError (one
    line) saying where to get them when it is not given or does not hold them."""
    text = settings.weights or os.environ.get(WEIGHTS_ENV, "")
    if not text:
        raise UserError(f"ftpfn needs FT-PFN's weights: {WHERE_TO_GET}")
    folder = Path(text).expanduser()
    model = folder if folder.name == ".model" else folder / ".model"
    if not model.is_dir():
        raise UserError(f"ftpfn: {folder} holds no .model folder; {WHERE_TO_GET}")
    archive, weights = WEIGHTS_FILES.get(settings.version, (None, None))
    if archive is None:
        raise UserError(f"ftpfn: unknown FT-PFN version '{settings.version}'; ifbo 0.4 has 0.0.1")
    missing = [name for name in (archive, weights) if not (model / name).is_file()]
    if missing:
        raise UserError(f"ftpfn: {model} does not hold {' and '.join(missing)}; {WHERE_TO_GET}")
    return model


def weights_digest(settings) -> str | None:
    """SHA-256 (hex) of the weights file `settings` name, or None when none is given or found."""
    try:
        path = weights_folder(settings) / WEIGHTS_FILES[settings.version][1]
    except UserError:
        return None
    stat = path.stat()
    return _file_digest(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:     # size and time: a changed file is read again
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def load_surrogate(model_folder: Path, version: str):
    """ifbo's FTPFN on CPU from `model_folder` (its `.model`; the archive present, so nothing is downloaded);
    UserError (one line) when the weights file is not a model ifbo can load."""
    from ifbo import FTPFN

    weights_file = model_folder / WEIGHTS_FILES[version][1]
    try:
        surrogate = FTPFN(target_path=model_folder, version=version)
    except Exception as exc:                   # a truncated or foreign file: torch's or ifbo's own error
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise UserError(f"ftpfn: {weights_file} is not FT-PFN's model as ifbo saves "
                        f"it ({detail}); {WHERE_TO_GET}") from exc
    if not callable(getattr(surrogate.model, "criterion", None)):
        raise UserError(f"ftpfn: {weights_file} holds a model without the output "
                        f"distribution (`criterion`) FT-PFN's model carries; {WHERE_TO_GET}")
    return surrogate
