"""Random search on syne-tune 0.16's SimulatorBackend over a tabular blackbox of NAS-Bench-NLP.

Run by `scripts/bench_simulator.py --synetune PYTHON` under an interpreter that has syne-tune installed
(its own virtual environment: syne-tune is never a dependency of nasbench). Arguments: an .npz with the
searcher's table (`val_loss`, `wall_time_s`, `n_epochs`, rows = architectures), simulated hours,
workers. The blackbox has one hyperparameter (the architecture's row), the epoch as its fidelity,
and two objectives per epoch: validation log-perplexity (not finite -> 10) and the cumulative recorded
wall time (seconds), which the backend uses as each result's elapsed time, so a trial trained to 50
epochs occupies its worker exactly as long as in nasbench. Prints one JSON line: real seconds of
`Tuner.run` and the number of trials started.
"""
import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", type=Path, help=".npz with val_loss, wall_time_s, n_epochs (rows = architectures)")
    parser.add_argument("hours", type=float, help="simulated hours")
    parser.add_argument("workers", type=int, help="simulated workers")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import benchmarks  # noqa: F401  (before numpy: it pins the BLAS kernels, see benchmarks/core/blas_kernels.py)
    import numpy as np
    import pandas as pd
    from syne_tune import StoppingCriterion, Tuner
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.blackbox_tabular import BlackboxTabular
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.config_space import choice, randint
    from syne_tune.optimizer.baselines import RandomSearch

    table, hours, workers = args.table, args.hours, args.workers
    logging.getLogger("syne_tune").setLevel(logging.ERROR)
    data = np.load(table)
    val = np.nan_to_num(data["val_loss"], nan=10.0, posinf=10.0, neginf=10.0)
    elapsed = np.cumsum(np.nan_to_num(data["wall_time_s"], nan=0.0), axis=1)
    n, epochs = val.shape
    evaluations = np.stack([val, elapsed], axis=-1)[:, None, :, :]      # [arch, seed, epoch, objective]
    # a constant second column: BlackboxTabular looks configurations up by a tuple key, which pandas
    # only accepts on a multi-column index
    blackbox = BlackboxTabular(hyperparameters=pd.DataFrame({"arch": np.arange(n), "space": np.zeros(n, dtype=int)}),
                               configuration_space={"arch": randint(0, n - 1), "space": choice([0])},
                               fidelity_space={"epoch": randint(1, epochs)},
                               objectives_evaluations=evaluations,
                               objectives_names=["val_loss", "elapsed_time"])
    backend = UserBlackboxBackend(blackbox=blackbox, elapsed_time_attr="elapsed_time", max_resource_attr="epochs")
    config_space = {"arch": randint(0, n - 1), "space": choice([0]), "epochs": epochs}
    scheduler = RandomSearch(config_space, metrics=["val_loss"], random_seed=0)
    with tempfile.TemporaryDirectory(prefix="synetune-") as folder:
        import os

        os.environ["SYNETUNE_FOLDER"] = folder
        tuner = Tuner(trial_backend=backend, scheduler=scheduler,
                      stop_criterion=StoppingCriterion(max_wallclock_time=hours * 3600.0),
                      n_workers=workers, sleep_time=0, callbacks=[SimulatorCallback()], save_tuner=False,
                      results_update_interval=1e9, print_update_interval=1e9)
        start = time.perf_counter()
        tuner.run()
        real_s = time.perf_counter() - start
        trials = len(tuner.trial_backend._trial_dict) if hasattr(tuner.trial_backend, "_trial_dict") else None
    print(json.dumps({"real_s": real_s, "trials": trials}))


if __name__ == "__main__":
    main()
