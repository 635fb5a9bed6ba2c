"""Dask nanny preload for nasbench's workers: `dask worker ADDRESS --nthreads 1 --preload-nanny
nasbench_cli.harness.dask_nanny` (a `local:N` cluster uses it too, and as a worker preload). Before the nanny spawns (and re-spawns) its
worker process it
- turns hash randomisation off, as nasbench's local workers run, so SMAC gives the same results: the nanny
  replaces PYTHONHASHSEED=0 by a fixed 6640, but Python also reads "00" as 0 and the nanny passes it on;
- pins the worker's BLAS kernels and numpy's code paths as nasbench's own processes do
  (`benchmarks.core.blas_kernels`): `distributed` has imported numpy before any preload runs, so the nanny's
  own `import benchmarks` cannot, and `dask worker` started from a shell would otherwise run OpenBLAS's
  and numpy's AVX-512 code on a CPU that has it (a variable set in the nanny's environment is kept);
- turns off the worker's statistical profiler, which samples the running task every 10 ms and made trials
  cost 28% more CPU (measured: the paper's eight x 4 trials x 200 h, 48.4 s against 37.8 s locally);
- slows the diagnostics loops (event-loop tick 20 ms -> 1 s, system monitor 0.5 -> 5 s, memory monitor
  0.1 -> 1 s): an idle worker then uses 0.4% of a core instead of 3% (measured with psutil over 10 s).
"""

HASH_SEED_OFF = "00"


def dask_setup(nanny) -> None:
    """Called by the nanny after it is made and before it spawns its worker process; as a worker preload
    (a `local:N` cluster), in each worker process, where it makes the worker ignore Ctrl-C: a terminal
    sends it to the whole process group, and the run (which stops the cluster) handles it alone."""
    from dask.config import merge

    if type(nanny).__name__ != "Nanny":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return

    import os

    from benchmarks.core.blas_kernels import pinned_variables

    for name, value in pinned_variables().items():
        if name not in os.environ:
            nanny.pre_spawn_env.setdefault(name, value)
    nanny.pre_spawn_env["PYTHONHASHSEED"] = HASH_SEED_OFF
    nanny.env["PYTHONHASHSEED"] = HASH_SEED_OFF
    nanny.config = merge(nanny.config, nested(QUIET_WORKER))


QUIET_WORKER = {"distributed.worker.profile.enabled": False, "distributed.worker.memory.monitor-interval": "1s",
                "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "5s"}


def nested(dotted: dict) -> dict:
    """{"a.b": 1} -> {"a": {"b": 1}}, the shape of a nanny's config."""
    tree: dict = {}
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree
