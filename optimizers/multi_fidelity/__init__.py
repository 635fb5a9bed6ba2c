"""Multi-fidelity schedulers: Hyperband (ours and the release's), ASHA and asynchronous Hyperband."""
from optimizers.multi_fidelity.hyperband import Hyperband, HyperbandRelease
from optimizers.multi_fidelity.asha import ASHA, AsyncHyperband

__all__ = ["Hyperband", "HyperbandRelease", "ASHA", "AsyncHyperband"]
