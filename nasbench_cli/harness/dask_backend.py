"""Run trials on a dask.distributed cluster (`nasbench run --backend dask`).

The client (the `nasbench run` process) loads the benchmark, the feature matrices and the training-free
scores once and scatters them to every worker; each task runs one trial and returns its record; the
client checks it and writes the result file atomically. Workers therefore need no shared file system,
no data folder and no cache, only the same nasbench code and library versions (checked per trial).

Faults (tested with a LocalCluster):
- a worker killed mid-trial: Dask runs the trial again on another worker (a trial is a pure function of
  its spec, so the retry gives the same record); after `distributed.scheduler.allowed-failures` deaths
  (3 by default) the trial is reported as failed in one line and the others go on;
- the scheduler going away: the run stops with one line, every finished trial is on disk, and rerunning
  the same command (with a scheduler) completes the rest;
- Ctrl-C or SIGTERM: the futures are cancelled, finished files kept, a `local:N` cluster shut down.
"""
import itertools
import os
import pickle
import sys
import uuid
import zlib
from dataclasses import dataclass, replace

from benchmarks.core.errors import UserError

LOCAL_PREFIX = "local:"
CONNECT_TIMEOUT_S = 10
WORKER_WAIT_S = 60
INSTALL_HINT = "the dask backend needs dask.distributed: pip install -e '.[dask]'"


NANNY_PRELOAD = "nasbench_cli.harness.dask_nanny"   # worker processes with hash randomisation off, as locally
WORKER_HASH_SEED_HINT = (f"`dask worker ADDRESS --nthreads 1 --preload-nanny {NANNY_PRELOAD}` "
                         "(or PYTHONHASHSEED=0 and --no-nanny)")


class SchedulerLost(UserError):
    """The connection to the Dask scheduler went away during a run."""


@dataclass(frozen=True)
class SchedulerChoice:
    """Where trials run: a LocalCluster of `local_workers` processes, or the scheduler at `address`."""
    local_workers: int | None = None
    address: str | None = None

    def describe(self) -> str:
        return f"a local Dask cluster of {self.local_workers} worker process{'es' if self.local_workers != 1 else ''}" \
            if self.local_workers \
            else f"the Dask scheduler at {self.address}"


def parse_scheduler(text: str | None) -> SchedulerChoice:
    """`local:N` (N >= 1 worker processes on this machine), `local` (one per core, or `$NASBENCH_JOBS`) or a
    scheduler address (`tcp://host:8786`, `host:8786`); None means `local`."""
    from nasbench_cli.harness.cores import default_jobs

    text = (text or "local").strip()
    if text == "local":
        return SchedulerChoice(local_workers=default_jobs())
    if text.startswith(LOCAL_PREFIX):
        count = text[len(LOCAL_PREFIX):]
        if not count.isdigit() or not 1 <= int(count) <= 1024:
            raise UserError(f"--scheduler {text}: expected local:N with N worker processes between 1 and 1024")
        return SchedulerChoice(local_workers=int(count))
    if not text or any(c.isspace() for c in text):
        raise UserError(f"--scheduler {text!r}: expected local:N or a scheduler address such as tcp://host:8786")
    scheme, _, location = text.rpartition("://") if "://" in text else ("tcp", "", text)
    if scheme not in SCHEDULER_SCHEMES:
        raise UserError(f"--scheduler {text}: unknown protocol '{scheme}://' (Dask speaks "
                        f"{', '.join(s + '://' for s in SCHEDULER_SCHEMES)}); e.g. tcp://host:8786")
    if scheme in ("tcp", "tls", "ws", "wss"):
        host, colon, port = location.rpartition(":") if not location.endswith("]") else (location, "", "")
        host = host if colon else location
        if not host.strip("[]") or colon and (not port.isdigit() or not 0 < int(port) < 65536):
            raise UserError(f"--scheduler {text}: expected {scheme}://HOST:PORT with a host and a port between 1 "
                            "and 65535, e.g. tcp://10.0.0.1:8786")
    return SchedulerChoice(address=text)


SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")   # distributed.comm's registered backends


def import_distributed():
    try:
        import distributed
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    return distributed


@dataclass(frozen=True)
class TrialInputs:
    """Everything a worker needs besides a trial's spec, scattered once: the benchmark (without cached
    views), feature matrices by kind and training-free scores by metric, pickled and, for a remote
    cluster, zlib-compressed (PTB with the 50-d features: 40 MB raw, 17 MB compressed; compressing takes
    0.6 s, so a local cluster gets them raw), plus the client's environment fingerprint, which every
    worker must match. `token` names one packing; a worker unpacks it once."""
    token: str
    packed: bytes
    fingerprint: dict
    compressed: bool = True

    def unpack(self) -> tuple:
        """(benchmark, features by kind, scores by metric), unpacked once per process."""
        if self.token not in _UNPACKED:
            _UNPACKED.clear()
            _UNPACKED[self.token] = pickle.loads(zlib.decompress(self.packed) if self.compressed else self.packed)
        return _UNPACKED[self.token]


_UNPACKED: dict = {}


def pack_inputs(benchmark, features: dict, scores: dict, fingerprint: dict, compress: bool = True) -> TrialInputs:
    # drops memoised views (recipes, ...) and the test losses: workers run searchers; the client scores
    portable = replace(benchmark, search=replace(benchmark.search), test_loss=None)
    packed = pickle.dumps((portable, features, scores), protocol=5)
    return TrialInputs(uuid.uuid4().hex, zlib.compress(packed, 1) if compress else packed, fingerprint, compress)


def score_key(algorithm) -> str | None:
    """Which score table an algorithm reads: metric and split."""
    return None if algorithm.score_metric is None else f"{algorithm.score_metric}@{algorithm.score_split}"


def gather_inputs(benchmark, algos, overrides, compress: bool = True) -> TrialInputs:
    """Load once, here, what trials of `algos` read: features and scores come from this machine's caches."""
    from nasbench_cli.results.fingerprint import environment_fingerprint
    from nasbench_cli.harness.trial import load_features, load_scores
    from optimizers.registry import make_algorithm

    features, scores = {}, {}
    for algo in algos:
        algorithm = make_algorithm(algo, overrides.get(algo), benchmark.name)
        kind, metric = algorithm.feature_kind, algorithm.score_metric
        shipped = kind == "shipped-10d" and benchmark.search.shipped_features is not None
        if kind is not None and not shipped and kind not in features:   # shipped ones are in the table
            features[kind] = load_features(benchmark, kind)
        key = score_key(algorithm)
        if key is not None and key not in scores:
            scores[key] = load_scores(benchmark, metric, algorithm.score_split)
    return pack_inputs(benchmark, features, scores, environment_fingerprint(), compress)


def run_on_worker(spec, inputs: TrialInputs) -> dict:
    """Dask task: run one trial and return its unscored record (the client scores and writes it: workers
    hold no test losses). UserError if this worker's environment would not give the client's results;
    TrialFailed (one line) if the algorithm raises."""
    from nasbench_cli.results.fingerprint import environment_fingerprint, fingerprint_difference
    from nasbench_cli.harness.failures import trial_failure
    from nasbench_cli.harness.trial import isolated_if, load_features, unscored_record
    from optimizers.registry import algorithm_name, algorithm_source, make_algorithm

    where = _worker_address()
    if hash_randomisation_on():
        raise UserError(f"Dask worker {where} runs with hash randomisation on, so SMAC's results would differ "
                        f"from a local run; start workers with {WORKER_HASH_SEED_HINT}")
    difference = fingerprint_difference(inputs.fingerprint, environment_fingerprint())
    if difference:
        raise UserError(f"Dask worker {where} would not reproduce a local run: {difference}")
    try:
        algorithm = make_algorithm(spec.algo, dict(spec.overrides), spec.benchmark)
        algorithm = isolated_if(spec.isolate, spec.algo, dict(spec.overrides), spec.benchmark, algorithm)
    except UserError as exc:
        raise UserError(f"on Dask worker {where}: {exc}") from None
    benchmark, all_features, all_scores = inputs.unpack()
    kind = algorithm.feature_kind
    features = None if kind is None else all_features[kind] if kind in all_features \
        else load_features(benchmark, kind)
    scores = None if algorithm.score_metric is None else all_scores[score_key(algorithm)]
    try:
        return unscored_record(benchmark, algorithm, algorithm_name(spec.algo), algorithm_source(spec.algo),
                            spec.trial, spec.seed, spec.budget_s, spec.workers, spec.label or None,
                               features=features, scores=scores, max_jobs=spec.max_jobs,
                               objectives=spec.objectives, constraints=spec.constraints,
                               stop_at_best=spec.stop_at_best)
    except UserError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:   # a task thread gets no Ctrl-C: all the algorithm's
        raise trial_failure(exc) from None


def hash_randomisation_on() -> bool:
    """Whether this process hashes strings with a random or non-zero seed (PYTHONHASHSEED is not 0)."""
    return bool(sys.flags.hash_randomization)


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "(not in a worker)"


def connect(choice: SchedulerChoice):
    """(client, cluster or None): a LocalCluster started here, or a client of the scheduler at the address."""
    distributed = import_distributed()
    from nasbench_cli.harness.runner import WORKER_ENV

    if choice.local_workers:
        for key, value in WORKER_ENV.items():   # spawned worker processes inherit this environment
            if key != "PYTHONHASHSEED":         # the nanny preload sets that one
                os.environ.setdefault(key, value)
        import dask

        from nasbench_cli.harness.dask_nanny import QUIET_WORKER

        # the scheduler here: no 20 ms tick, no 0.5 s system monitor; its HTTP server (which starts even
        # without a dashboard) on a free port, not 8787, which another cluster may hold
        with dask.config.set(QUIET_WORKER):
            cluster = distributed.LocalCluster(n_workers=choice.local_workers, threads_per_worker=1,
                                               processes=True, dashboard_address=":0", silence_logs=50,
                                               preload_nanny=[NANNY_PRELOAD], preload=[NANNY_PRELOAD])
        try:
            return distributed.Client(cluster, set_as_default=False), cluster
        except BaseException:
            cluster.close()
            raise
    try:
        return distributed.Client(choice.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False), None
    except (OSError, TimeoutError, ValueError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {choice.address} within {CONNECT_TIMEOUT_S} s "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'})") from None


def execute_dask(specs, choice: SchedulerChoice, inputs: TrialInputs, benchmark, on_done=None) -> tuple[list[dict], list[str]]:
    """Run `specs` on the cluster; returns (summaries, errors) as `runner.execute`. Each record is checked,
    scored with `benchmark`'s test losses and written here, as it arrives. SchedulerLost if the scheduler
    goes away (finished files kept)."""
    from nasbench_cli.harness.runner import failure_line, write_record
    from nasbench_cli.results.scoring import score_record

    distributed = import_distributed()
    import logging

    hash_seed = os.environ.get("PYTHONHASHSEED")   # a local cluster's nannies set it in this process
    # a lost scheduler is our one line, not distributed's tracebacks (logged by its threads until exit)
    for name in ["distributed"] + [n for n in logging.root.manager.loggerDict if n.startswith("distributed.")]:
        logging.getLogger(name).setLevel(logging.CRITICAL)   # children set their own levels
    client = cluster = None
    futures = {}
    try:
        client, cluster = connect(choice)
        if cluster is None and not client.scheduler_info().get("workers"):
            try:
                client.wait_for_workers(1, timeout=WORKER_WAIT_S)
            except TimeoutError:
                raise UserError(f"no Dask worker joined {choice.describe()} within {WORKER_WAIT_S} s") from None
        shared = client.scatter(inputs, broadcast=True, hash=False)
        submitted = itertools.count()

        def submit(spec):
            key = f"nasbench-trial-{spec.label}-{spec.trial}-{os.getpid()}-{next(submitted)}"
            future = client.submit(run_on_worker, spec, shared, pure=False, key=key)
            futures[future] = spec
            return future

        pending = distributed.as_completed([submit(spec) for spec in specs], loop=client.loop)
        summaries, errors, resubmitted = [], [], {}
        for future in pending:
            spec = futures.pop(future)
            summary = None
            try:
                record = future.result()
            except UserError:
                raise
            except distributed.client.FutureCancelledError as cancelled:
                if cancelled.reason == "scheduler-connection-lost" or client.status != "running":
                    raise SchedulerLost(f"lost {choice.describe()}") from None
                # every worker holding the scattered inputs died: scatter them again, run the trial again
                resubmitted[spec] = resubmitted.get(spec, 0) + 1
                if resubmitted[spec] <= _allowed_failures():
                    if shared.status != "finished":
                        shared = client.scatter(inputs, broadcast=True, hash=False)
                    pending.add(submit(spec))
                    continue
                errors.append(f"{spec.label or spec.algo} trial {spec.trial}: cancelled by Dask "
                              f"({cancelled.reason}) {resubmitted[spec]} times; rerun to try it again")
            except distributed.KilledWorker:
                errors.append(f"{spec.label or spec.algo} trial {spec.trial}: the Dask workers running it died "
                              f"{_allowed_failures() + 1} times (out of memory?); rerun to try it again")
            except Exception as exc:   # a failed trial is reported, the others go on
                errors.append(failure_line(spec, exc))
            else:
                check_source(spec, record)
                summary = write_record(spec, score_record(record, benchmark))
                summaries.append(summary)
            if on_done is not None:
                on_done(spec, summary)
        return summaries, errors
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:
        _close(client, cluster)
        if hash_seed is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = hash_seed


def check_source(spec, record: dict) -> None:
    """UserError if the worker ran another version of a plugin's code than this client would."""
    from optimizers.plugins import same_source
    from optimizers.registry import algorithm_source

    here = algorithm_source(spec.algo)
    if not same_source(record.get("algorithm_source"), here):
        there = record.get("algorithm_source") or {}
        raise UserError(f"a Dask worker ran another version of {spec.algo} (source sha256 "
                        f"{str(there.get('sha256'))[:12]} there, {str((here or {}).get('sha256'))[:12]} here); "
                        "install the same plugin code on the workers")


def _allowed_failures() -> int:
    import dask

    return int(dask.config.get("distributed.scheduler.allowed-failures"))


def _close(client, cluster) -> None:
    """Close quietly: the scheduler may already be gone."""
    import contextlib

    if client is not None:
        with contextlib.suppress(Exception):
            client.close(timeout=5)
    if cluster is not None:
        with contextlib.suppress(Exception):
            cluster.close(timeout=10)
