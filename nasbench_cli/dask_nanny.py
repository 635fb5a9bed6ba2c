"""Dask nanny preload that starts worker processes with hash randomisation off, as nasbench's local
workers run (so SMAC gives the same results): `dask worker ADDRESS --nthreads 1 --preload-nanny
nasbench_cli.dask_nanny`. The nanny itself replaces PYTHONHASHSEED=0 by a fixed 6640; Python reads "00"
as 0 too, and the nanny passes it through unchanged."""

HASH_SEED_OFF = "00"


def dask_setup(nanny) -> None:
    """Called by the nanny before it spawns (and re-spawns) its worker process."""
    nanny.pre_spawn_env["PYTHONHASHSEED"] = HASH_SEED_OFF
    nanny.env["PYTHONHASHSEED"] = HASH_SEED_OFF
