"""Run many trials in worker processes, one atomic result file per trial, resumable.

Worker processes die with the run: each watches its parent and exits as soon as the parent is gone
(a killed `nasbench run` leaves no process behind still writing result files).

Trial k of an algorithm uses seed `seed + k`; with `workers` > 1 simulated workers its results go
under the label `algo@Kw` (see `results_io`). Every trial runs in a loky worker process
started with PYTHONHASHSEED=0 and single-threaded numerical libraries, so a trial's result is the same
whatever `--jobs` is and in whichever order trials finish.
"""
import os
import signal
import threading
import time
from pathlib import Path

from benchmarks.core.atomic import write_json_atomic
from benchmarks.core.errors import UserError
from nasbench_cli.harness.failures import TrialFailed, trial_failure
from nasbench_cli.harness.run_description import RunDescription, TrialSpec
from nasbench_cli.results.files import load_trial

WORKER_ENV = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1",
              # workers start as `python -m ...`, which would put the current folder first on sys.path:
              # a user's own `optimizers/` or `benchmarks/` there would replace ours (plugins append it last)
              "PYTHONSAFEPATH": "1"}


def read_existing(path: Path) -> dict | None:
    """A finished trial's record, or None if there is none; UserError if the file is malformed."""
    return load_trial(path) if Path(path).is_file() else None


def plan_trials(run: RunDescription, scores_checksums: dict | None = None,
                data_checksum: str | None = None) -> tuple[list[TrialSpec], list[Path]]:
    """The trials of `run` still to run, and the result files already done; refuses files made with other
    settings or (when `data_checksum` is given) from other data.

    `scores_checksums`: {algo: checksum of the training-free scores it would read now} for the
    proxy-guided algorithms; a file made from other scores is refused too.
    """
    from optimizers.plugins import same_source
    from optimizers.registry import algorithm_source

    from nasbench_cli.results.files import refuse_other_problem

    scores_checksums = scores_checksums or {}
    budget_s, objectives, constraints = run.budget_s, run.objectives, run.constraints
    refuse_other_problem(run.out, run.benchmark, objectives, constraints)   # before anything is written

    todo, done, conflicts, other_data, other_code = [], [], [], [], []
    for algo in run.algos:
        source = algorithm_source(algo)
        expected = run.settings_hash_of(algo)
        algo_label = run.label_of(algo)
        for k in range(run.trials):
            spec = run.trial(algo, k, expected, algo_label)
            path, seed = spec.path, run.seed
            existing = None if run.overwrite else read_existing(path)
            if existing is None:
                todo.append(spec)
                continue
            same_settings = existing.get("settings_hash") == expected and existing.get("seed") == seed + k
            if data_checksum is not None and existing.get("data_checksum") != data_checksum:
                other_data.append((path, existing))
            elif not same_source(existing.get("algorithm_source"), source):
                other_code.append((path, existing, source))
            elif same_settings and existing.get("scores_checksum") == scores_checksums.get(algo):
                done.append(path)
            else:
                conflicts.append((path, existing, same_settings))
    if other_data:
        path, existing = other_data[0]
        raise UserError(f"{len(other_data)} result file(s) were made from other data, e.g. {path} (data checksum "
                        f"{str(existing.get('data_checksum'))[:12]} there, {str(data_checksum)[:12]} now); "
                        "use another --out or pass --overwrite")
    if other_code:
        path, existing, source = other_code[0]
        there = existing.get("algorithm_source") or {"kind": "built-in"}
        now = source or {"kind": "built-in"}
        raise UserError(f"{len(other_code)} result file(s) were made by another version of the algorithm's code, "
                        f"e.g. {path} ({_source_difference(there, now)}); "
                        "use another --out or --label, or pass --overwrite")
    if conflicts:
        path, existing, same_settings = conflicts[0]
        differences = []
        if existing.get("budget_s") != budget_s:
            differences.append(f"budget {existing.get('budget_s', 0) / 3600:g} h there, {budget_s / 3600:g} h now")
        if existing.get("seed") != seed + int(existing.get("trial", 0)):
            differences.append(f"seed {existing.get('seed')} there")
        if same_settings:   # so only the training-free scores differ
            differences.append("other training-free scores: the score cache changed since "
                               f"({existing.get('scored_cells', 'unknown')} cells scored then)")
        if (existing.get("objectives") or []) != list(objectives) or \
                (existing.get("constraints") or []) != [str(c) for c in constraints]:
            differences.append("other objectives or constraints "
                               f"({','.join(existing.get('objectives') or ['single objective'])} "
                               f"{' '.join(existing.get('constraints') or [])} there)".replace(" )", ")"))
        if not differences:
            differences.append(_settings_difference(existing.get("settings") or {}, run, existing.get("algo")))
        raise UserError(f"{len(conflicts)} result file(s) were made with other settings, e.g. {path} "
                        f"({'; '.join(differences)}); use another --out or pass --overwrite")
    return todo, done


def _settings_difference(there: dict, run: RunDescription, algo: str | None) -> str:
    """Which of the algorithm's recorded settings differ from this run's, for the refusal line."""
    from optimizers.registry import make_algorithm

    try:
        now = make_algorithm(algo, run.overrides_of(algo), run.benchmark).settings_dict()
    except Exception:            # an algorithm no longer known: say no more than that the settings differ
        return "other algorithm settings"
    changed = [key for key in sorted(set(there) | set(now)) if there.get(key) != now.get(key)]
    if not changed:
        return "other algorithm settings"

    def shown(value):
        text = str(value)
        return text[:12] + "..." if len(text) > 15 else text

    return "other algorithm settings: " + ", ".join(f"{key} {shown(there.get(key))} there, {shown(now.get(key))} now"
                                                    for key in changed[:3])


def _describe_source(source: dict) -> str:
    if source.get("kind") == "built-in":
        return "nasbench's built-in algorithm"
    version = f" {source['distribution']} {source['version']}" if source.get("distribution") else ""
    return f"{source.get('class')}{version}, source sha256 {str(source.get('sha256'))[:12]}"


def _source_difference(there: dict, now: dict) -> str:
    """What differs between two versions of a plugin's code, for the refusal line."""
    from optimizers.plugins import changed_sources

    changed = changed_sources(there, now)
    if changed and there.get("sha256") == now.get("sha256"):
        return f"its helper file(s) {', '.join(changed[:3])} changed"
    return f"{_describe_source(there)} there, {_describe_source(now)} now"


PARENT_POLL_S = 0.2
_watching: list = []      # the parent pid this worker process watches (set once)


def die_with_parent(parent_pid: int) -> None:
    """In a worker process started by `parent_pid`: end the process (`os._exit`) at once if that parent
    is already gone, else start a daemon thread that does so when it goes (the worker is reparented).
    Started once per process (the executor's initializer, then a check before each trial); a no-op
    in the parent itself."""
    if os.getpid() == parent_pid:
        return
    if os.getppid() != parent_pid:
        os._exit(1)
    if _watching:
        return
    # Ctrl-C at a terminal reaches the whole process group: the parent alone handles it (it kills the
    # workers), so no worker prints a traceback, and a KeyboardInterrupt inside a worker can only have
    # been raised by the algorithm's code.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watching.append(parent_pid)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, name="nasbench-parent-watch", daemon=True).start()


def run_and_write(spec: TrialSpec, parent_pid: int | None = None, progress_path=None) -> dict:
    """Worker: run one trial and write its result file atomically; returns a short summary.
    `parent_pid`: the run's process, whose death ends this worker. `progress_path`: where the trial
    reports how far it is (nasbench_cli.harness.trial_progress)."""
    from nasbench_cli.harness import trial_progress
    from nasbench_cli.harness.trial import run_trial_spec

    if parent_pid is not None:
        die_with_parent(parent_pid)

    try:
        with trial_progress.reporting_to(progress_path):
            record = run_trial_spec(spec)
    except UserError:
        raise
    except KeyboardInterrupt as exc:
        if parent_pid is None or os.getpid() == parent_pid:
            raise                       # in the parent this is the user's Ctrl-C
        raise trial_failure(exc) from None
    except (Exception, SystemExit) as exc:
        raise trial_failure(exc) from None
    return write_record(spec, record)


def write_record(spec: TrialSpec, record: dict) -> dict:
    """Write `record`, the result of `spec`, atomically to its file; returns a short summary."""
    if record["settings_hash"] != spec.settings_hash:
        raise RuntimeError(f"settings hash changed in the worker for {spec.path}")
    write_json_atomic(spec.path, record)
    return {"algo": spec.algo, "label": spec.label, "trial": spec.trial, "final_regret": record["final_regret"],
            "compute_s": record["compute_s"], "path": str(spec.path)}


def failure_line(spec: TrialSpec, exc: BaseException) -> str:
    """The run's one-line report of a failed trial."""
    what = str(exc) if isinstance(exc, TrialFailed) else f"{type(exc).__name__}: {exc}"
    return f"{spec.label or spec.algo} trial {spec.trial}: {what}"


def remove_stale_temp_files(out: Path, benchmark: str) -> int:
    """Delete temp files left by a killed run (never complete result files). Call it only while
    holding the folder's run lock (`run_lock`), so that no live run owns them."""
    removed = 0
    root = Path(out) / benchmark
    if root.is_dir():
        for tmp in root.glob("*/.trial-*.tmp"):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


def execute(specs: list[TrialSpec], jobs: int, on_done=None,
            on_progress=None) -> tuple[list[dict], list[str]]:
    """Run `specs` on `jobs` worker processes; returns (summaries, errors). Ctrl-C stops the workers;
    finished trials are already on disk, unfinished ones leave no result file. `on_progress({spec:
    (share of its budget simulated, jobs finished)})` is called about twice a second with the running
    trials that reported."""
    import shutil
    import tempfile

    for key, value in WORKER_ENV.items():   # also for workers' own children
        os.environ.setdefault(key, value)
    executor = _executor(jobs)
    summaries, errors = [], []
    pending, alone = list(specs), False
    remove_stale_progress_folders()
    progress_dir = Path(tempfile.mkdtemp(prefix=f"{PROGRESS_PREFIX}{os.getpid()}-")) if on_progress is not None \
        else None
    try:
        while pending:
            crashed = _run_batch(executor, pending, summaries, errors, on_done, last_try=alone,
                                 progress_dir=progress_dir, on_progress=on_progress)
            # A worker process that died (os._exit in an algorithm, a segfault, the OOM killer) fails every
            # trial the executor held; each is run again alone, so the one that ends its process is named and
            # the others' results stand (trials are deterministic: a rerun is the same trial).
            pending, alone = crashed, True
    finally:
        if progress_dir is not None:
            shutil.rmtree(progress_dir, ignore_errors=True)
    return summaries, errors


PROGRESS_PREFIX = "nasbench-progress-"     # + the run's pid: a folder whose run is gone can be removed


def remove_stale_progress_folders() -> int:
    """Delete the progress folders of runs that no longer exist (a run killed with kill -9 cannot remove
    its own); returns how many. Only folders named by a pid that is not alive are touched."""
    import re
    import shutil
    import tempfile

    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{PROGRESS_PREFIX}*"):
        owner = re.match(rf"{PROGRESS_PREFIX}(\d+)-", folder.name)
        if not folder.is_dir() or owner is None or _alive(int(owner.group(1))):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:         # another user's live process
        return True
    return True


def _executor(jobs: int):
    """loky's reusable executor with `jobs` workers (a fresh one if the last broke). The standalone
    `loky` package, the one joblib vendors: importing it skips joblib's own start-up (about 0.3 CPU-s in
    each of the run, its workers and loky's resource tracker)."""
    from loky import get_reusable_executor

    return get_reusable_executor(max_workers=jobs, env=WORKER_ENV, timeout=30,
                                 initializer=die_with_parent, initargs=(os.getpid(),))


def _run_batch(executor, specs, summaries, errors, on_done, last_try: bool, progress_dir=None,
               on_progress=None) -> list[TrialSpec]:
    """Run `specs` (one at a time when `last_try`); append to `summaries`/`errors`; return the specs lost
    to a worker process's death (to run again), unless `last_try`, when they are errors."""
    from concurrent.futures.process import BrokenProcessPool

    def progress_path(spec):
        return None if progress_dir is None else progress_dir / f"{spec.label or spec.algo}-{spec.trial}"

    crashed, futures = [], {}
    try:
        if last_try:
            for spec in specs:              # alone, a dying process names its trial
                executor = _executor(1)
                future = executor.submit(run_and_write, spec, os.getpid(), progress_path(spec))
                futures[future] = spec
                future.exception()          # wait for it
        else:
            futures.update({executor.submit(run_and_write, spec, os.getpid(), progress_path(spec)): spec
                            for spec in specs})
        for future in _as_completed(futures, on_progress, progress_path):
            spec = futures[future]
            summary = None
            try:
                summary = future.result()
            except UserError:
                raise
            except BrokenProcessPool as exc:      # loky's TerminatedWorkerError is one
                if not last_try:
                    crashed.append(spec)
                    continue
                errors.append(f"{spec.label or spec.algo} trial {spec.trial}: its worker process died while "
                              f"running it{_exit_codes(exc)}: the algorithm's code ended the process (os._exit?) "
                              "or crashed it")
            except Exception as exc:  # a failed trial is reported, the others go on
                errors.append(failure_line(spec, exc))
            if summary is not None:
                summaries.append(summary)
            if on_done is not None:
                on_done(spec, summary)
    except BaseException:   # Ctrl-C: kill the workers, quietly
        stop_quietly(executor, futures)
        raise
    return crashed


def _as_completed(futures: dict, on_progress, progress_path):
    """The futures as they finish (like concurrent.futures.as_completed); meanwhile, about twice a second,
    `on_progress` hears how far the running trials are."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from nasbench_cli.harness import trial_progress

    waiting = set(futures)
    while waiting:
        done, waiting = wait(waiting, timeout=0.5 if on_progress is not None else None, return_when=FIRST_COMPLETED)
        yield from done
        if on_progress is not None and waiting:
            shares = {futures[f]: trial_progress.read(progress_path(futures[f])) for f in waiting}
            on_progress({spec: share for spec, share in shares.items() if share is not None})


def stop_quietly(executor, futures) -> None:
    """Cancel what has not started, kill the workers (they ignore Ctrl-C) and wait for loky's manager
    thread to end, so that it prints no traceback (it raced the shutdown: `KeyError` in
    `add_call_item_to_queue`) and no worker outlives the run."""
    for future in futures:
        future.cancel()
    for pid in list(getattr(executor, "_processes", {})):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:                     # already gone
            pass
    previous = threading.excepthook

    def quiet(args):
        if not args.thread.name.startswith("ExecutorManagerThread"):
            previous(args)

    threading.excepthook = quiet
    try:
        executor.shutdown(wait=True, kill_workers=True)
    except BaseException:  # a second Ctrl-C while stopping: the workers are being killed anyway
        pass
    finally:
        threading.excepthook = previous


def _exit_codes(exc: BaseException) -> str:
    import re

    codes = re.search(r"exit codes? of the workers? (?:are|is) \{([^}]*)\}", str(exc))
    return f" (exit code {codes.group(1).replace('EXIT(', '').rstrip(')')})" if codes else ""
