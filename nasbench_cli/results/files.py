"""Find, read and validate the per-trial result files written by `nasbench run`.

Layout: `OUT/<benchmark>/<label>/trial-<k>.json`, one record (`nasbench_cli.results.record`) each;
the label is the algorithm's name, with `@Kw` when K > 1 simulated workers ran it (`hb@4w`), so runs of
one algorithm at several worker counts sit side by side and are compared as separate entries.
Anything else in those folders (temporary `.trial-3.json.XXXX.tmp` files of a killed run, figures,
notes) is ignored. A `trial-<k>.json` that does not parse or lacks keys is an error naming the file
(`UserError`, exit 2): silently skipping it would bias every statistic. Delete it (or re-run
`nasbench run`, which redoes trials whose file is unreadable) and try again.
"""
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.core.errors import UserError

from nasbench_cli.results.record import RESULT_FORMAT
OLD_FORMATS = ("nasbench-trial/1",)   # read and upgraded in memory (`upgrade`); every field: docs/reference/result-format.md
TRIAL_FILE = re.compile(r"^trial-(0|[1-9]\d*)\.json$")   # canonical names only: trial-01.json is not trial 1
TRAJECTORY_KEYS = ("time_s", "regret", "incumbent", "incumbent_epoch", "arch", "epochs")
REQUIRED_KEYS = ("format", "benchmark", "algo", "trial", "seed", "budget_s", "settings", "settings_hash",
                 "l_star", "benchmark_best_arch", "final_regret", "compute_s", "trajectory")


def trial_path(out, benchmark: str, label: str, trial: int) -> Path:
    """Where trial `trial` of the run labelled `label` (e.g. `hb`, `hb@4w`) on `benchmark` lives under
    the results folder `out`."""
    return Path(out) / benchmark / label / f"trial-{int(trial)}.json"


def record_label(record: dict) -> str:
    """The label a trial record is compared under (records made before worker labels: its algo)."""
    return record.get("label") or record["algo"]


def record_workers(record: dict) -> int:
    """Simulated workers of a trial record (1 for records made before workers existed)."""
    return int(record.get("workers") or 1)


def upgrade(record):
    """A record of an older format as the current one, in memory: format 1 named the benchmark's best
    architecture `best_arch` (now `benchmark_best_arch`) and had no `algorithm_source` (built-in)."""
    if isinstance(record, dict) and record.get("format") == "nasbench-trial/1":
        record = dict(record)
        if "best_arch" in record:
            record["benchmark_best_arch"] = record.pop("best_arch")
        record.setdefault("algorithm_source", None)
        record["format"] = RESULT_FORMAT
    return record


def trial_problem(record) -> str | None:
    """What is wrong with a parsed trial record (a short phrase), or None if it is well formed."""
    if not isinstance(record, dict):
        return "not a JSON object"
    record = upgrade(record)
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        return f"missing key(s) {', '.join(missing)}"
    if record["format"] != RESULT_FORMAT:
        return f"format is {record['format']!r}, expected {RESULT_FORMAT!r} (or {', '.join(OLD_FORMATS)})"
    traj = record["trajectory"]
    if not isinstance(traj, dict):
        return "trajectory is not an object"
    missing = [k for k in TRAJECTORY_KEYS if k not in traj]
    if missing:
        return f"trajectory lacks {', '.join(missing)}"
    lengths = {len(traj[k]) for k in TRAJECTORY_KEYS if isinstance(traj[k], list)}
    if len(lengths) != 1 or any(not isinstance(traj[k], list) for k in TRAJECTORY_KEYS):
        return "trajectory lists have different lengths"
    times = traj["time_s"]
    if any(not _is_number(t) for t in times) or any(b < a for a, b in zip(times, times[1:])):
        return "trajectory time_s is not a non-decreasing list of numbers"
    if any(r is not None and not _is_number(r) for r in traj["regret"]):
        return "trajectory regret holds something other than numbers and nulls"
    if record["final_regret"] is not None and not _is_number(record["final_regret"]):
        return "final_regret is neither a number nor null"
    if not _is_number(record["budget_s"]) or record["budget_s"] <= 0:
        return "budget_s is not a positive number"
    if not isinstance(record["trial"], int):
        return "trial is not an integer"
    workers = record.get("workers", 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        return "workers is not a positive integer"
    return _type_problem(record, traj, workers) or _consistency_problem(record, traj, workers)


INT64 = 2 ** 63


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value, low=-INT64, high=INT64 - 1) -> bool:
    """A JSON integer (not a bool, not a float) within [low, high] (64-bit by default)."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _optional(check):
    return lambda value: value is None or check(value)


def _is_str(value) -> bool:
    return isinstance(value, str)


def _is_nonneg(value) -> bool:
    return _is_number(value) and value >= 0


# field -> (check, what it must be); every field report, plot, export and check read (docs/reference/result-format.md)
FIELD_TYPES = {
    "seed": (_is_int, "an integer"),
    "l_star": (_is_number, "a number"),
    "benchmark_best_arch": (_is_int, "an integer architecture id"),
    "settings_hash": (_is_str, "a string"),
    "data_checksum": (_optional(_is_str), "a string or null"),
    "scores_checksum": (_optional(_is_str), "a string or null"),
    "scored_cells": (_optional(lambda v: _is_int(v, 0)), "a non-negative integer or null"),
    "n_evaluations": (lambda v: _is_int(v, 0), "a non-negative integer"),
    "simulated_time_s": (_is_nonneg, "a non-negative number"),
    "wall_s": (_is_nonneg, "a non-negative number"),
    "max_jobs": (lambda v: _is_int(v, 1), "a positive integer"),
    "isolated": (lambda v: v is True, "true"),
    "table_used_up_s": (_optional(_is_nonneg), "a non-negative number or null"),
    "stopped_at_best_s": (_is_nonneg, "a non-negative number"),
    "versions": (lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
                 "an object of version strings"),
    "algorithm_source": (lambda v: v is None or _is_source(v), "null or an object of strings (plugin provenance)"),
    "objectives": (lambda v: isinstance(v, list) and 2 <= len(v) <= 3 and all(isinstance(x, str) for x in v),
                   "a list of two or three objective names"),
    "constraints": (lambda v: isinstance(v, list) and len(v) > 0 and all(isinstance(x, str) for x in v),
                    "a list of constraint strings"),
    "hv_space": (lambda v: isinstance(v, dict) and all(isinstance(v.get(k), list) and all(_is_number(x) for x in v[k])
                                                       for k in ("lower", "upper", "reference"))
                 and _is_number(v.get("true_hv")), "an object with lower, upper, reference and true_hv"),
    "front": (lambda v: isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and _is_int(p[0])
                                                    and _is_int(p[1], 1) for p in v), "a list of [id, epoch] pairs"),
}
# trajectory / jobs list -> (check per entry, what each entry must be)
TRAJECTORY_TYPES = {
    "incumbent": (_optional(_is_int), "integer ids or nulls"),
    "incumbent_epoch": (_optional(lambda v: _is_int(v, 1)), "epochs (integers >= 1) or nulls"),
    "arch": (_is_int, "integer ids"),
    "epochs": (lambda v: _is_int(v, 0), "epochs (integers >= 0)"),
}
JOB_TYPES = {
    "start_s": (_is_nonneg, "non-negative numbers"),
    "from_epoch": (lambda v: _is_int(v, 0), "epochs (integers >= 0)"),
    "overhead_s": (_is_nonneg, "non-negative numbers"),
}


def _is_source(value) -> bool:
    """A plugin's `algorithm_source`: an object of strings (or nulls), `sources` an object of strings."""
    if not isinstance(value, dict):
        return False
    for key, item in value.items():
        if key == "sources":
            if not isinstance(item, dict) or not all(isinstance(h, str) for h in item.values()):
                return False
        elif item is not None and not isinstance(item, str):
            return False
    return True


def _type_problem(record: dict, traj: dict, workers: int) -> str | None:
    """The first field whose JSON type or range is not what `nasbench run` writes (a hand edit), so that
    report, plot, export and check all refuse it in one line instead of failing half-way."""
    for key, (check, what) in FIELD_TYPES.items():
        if key in record and not check(record[key]):
            return f"{key} is not {what}"
    for key, (check, what) in TRAJECTORY_TYPES.items():
        if not all(check(v) for v in traj[key]):
            return f"trajectory {key} holds something other than {what}"
    if any((inc is None) != (ep is None) for inc, ep in zip(traj["incumbent"], traj["incumbent_epoch"])):
        return "trajectory incumbent and incumbent_epoch are not null together"
    if ("objectives" in record) != ("hv_space" in record and "front" in record):
        return "objectives, hv_space and front go together (a multi-objective record has all three)"
    if record.get("n_evaluations", len(traj["time_s"])) != len(traj["time_s"]):
        return "n_evaluations differs from the number of jobs in the trajectory"
    if "simulated_time_s" in record and record["simulated_time_s"] > record["budget_s"]:
        return "simulated_time_s goes past budget_s"
    jobs = record.get("jobs")
    if isinstance(jobs, dict):
        for key, (check, what) in JOB_TYPES.items():
            if isinstance(jobs.get(key), list) and not all(check(v) for v in jobs[key]):
                return f"jobs {key} holds something other than {what}"
        if isinstance(jobs.get("worker"), list) and not all(_is_int(w, 0, workers - 1) for w in jobs["worker"]):
            return f"jobs worker holds something other than worker numbers 0..{workers - 1}"
    return None


def _consistency_problem(record: dict, traj: dict, workers: int) -> str | None:
    """What a hand edit would break: regrets >= 0, final regret = the last regret, times within the
    budget, the settings hash of the settings recorded, the label of the algorithm and workers, and a
    job log parallel to the trajectory."""
    from nasbench_cli.results.record import LABEL_PATTERN, settings_hash

    regrets = traj["regret"]
    if any(r is not None and r < 0 for r in regrets):
        return "trajectory regret has a negative value (regret is >= 0 by definition)"
    if record["final_regret"] != (regrets[-1] if regrets else None):
        return "final_regret differs from the last regret of the trajectory"
    if traj["time_s"] and traj["time_s"][-1] > record["budget_s"]:
        return "trajectory time_s goes past budget_s"
    if not _is_number(record["compute_s"]) or record["compute_s"] < 0:
        return "compute_s is not a non-negative number"
    if not isinstance(record["settings"], dict) or not isinstance(record["algo"], str) \
            or not isinstance(record["benchmark"], str):
        return "benchmark, algo or settings has the wrong type"
    expected = settings_hash(record["benchmark"], record["algo"], record["settings"], record["budget_s"], workers,
                             record.get("max_jobs"), record.get("objectives") or (), record.get("constraints") or ())
    if record["settings_hash"] != expected:
        return "settings_hash does not match the settings recorded (edited by hand?)"
    label = record.get("label", record["algo"])
    if not isinstance(label, str) or not re.fullmatch(LABEL_PATTERN, label) and label != record["algo"]:
        return f"label {label!r} is not a valid run label"
    jobs = record.get("jobs")
    if jobs is not None:
        keys = ("start_s", "worker", "from_epoch", "overhead_s")
        if not isinstance(jobs, dict) or any(not isinstance(jobs.get(k), list) or len(jobs[k]) != len(traj["time_s"])
                                             for k in keys):
            return "jobs lists are missing or not parallel to the trajectory"
        if any(not _is_number(s) or s > t for s, t in zip(jobs["start_s"], traj["time_s"])):
            return "a job starts after it ends"
    return None


def _parse(path: Path):
    """(record, None) or (None, problem)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    except UnicodeDecodeError as exc:
        return None, f"is not UTF-8 text (byte {exc.start})"
    try:
        record = upgrade(json.loads(text))
    except ValueError as exc:
        return None, f"is not valid JSON ({exc.msg} at line {exc.lineno})"
    problem = trial_problem(record)
    return (None, problem) if problem else (record, None)


def read_trial(path) -> dict | None:
    """The trial record at `path`, or None if the file is missing, unreadable or malformed
    (for resuming: such a trial is simply run again)."""
    path = Path(path)
    if not path.is_file():
        return None
    record, _ = _parse(path)
    return record


def load_trial(path) -> dict:
    """The trial record at `path`; UserError naming the file if it is unreadable or malformed."""
    path = Path(path)
    record, problem = _parse(path)
    if problem:
        raise UserError(f"result file {path}: {problem}; delete it, then `nasbench run` redoes that trial")
    match = TRIAL_FILE.match(path.name)
    if match and int(match.group(1)) != record["trial"]:
        raise UserError(f"result file {path}: holds trial {record['trial']}, its name says {match.group(1)}")
    return record


@dataclass
class Results:
    """Trial records found under a results folder: benchmark -> algo -> records sorted by trial."""
    root: Path
    runs: dict = field(default_factory=dict)

    @property
    def benchmarks(self) -> list[str]:
        return list(self.runs)

    def algos(self, benchmark: str) -> list[str]:
        return list(self.runs[benchmark])

    def trials(self, benchmark: str, algo: str) -> list[dict]:
        return self.runs[benchmark][algo]


LABEL = re.compile(r"^(?P<algo>.+?)@(?P<workers>\d+)w$")


def split_label(label: str) -> tuple[str, int]:
    """'hb@4w' -> ('hb', 4); 'hb' -> ('hb', 1)."""
    match = LABEL.match(label)
    return (match.group("algo"), int(match.group("workers"))) if match else (label, 1)


def algo_order(names) -> list[str]:
    """Registry order (optimizers.registry.ALGORITHMS) of the algorithm first, unknown names after it
    alphabetically; labels of one algorithm by worker count (hb, hb@4w, hb@16w)."""
    try:
        from optimizers.registry import ALGORITHMS
        known = {name: k for k, name in enumerate(ALGORITHMS)}
    except ImportError:  # pragma: no cover - the registry is part of the package
        known = {}

    # the generic names sit next to their relatives: rs before rs50e, bo before bo10d (so gpt's rs, re,
    # tpe keep the order of `--algo all` there)
    known.update({generic: known[relative] - 0.5 for generic, relative in (("rs", "rs50e"), ("bo", "bo10d"))
                  if generic in known and relative in known})

    def key(label):
        algo, workers = split_label(label)
        return (known.get(algo, len(known)), algo, workers, label)

    return sorted(set(names), key=key)


def _trial_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file() and TRIAL_FILE.match(p.name)]


def refuse_other_problem(out, benchmark: str, objectives=(), constraints=()) -> None:
    """UserError (one line) if OUT/<benchmark> already holds trials scored on other objectives or
    constraints than (`objectives`, `constraints` texts): a single-objective run written beside
    multi-objective results (or the other way round) would make the whole folder unreadable to `report`.
    Reads one trial file per run label; unreadable files are left to the checks that read them."""
    bench_dir = Path(out) / benchmark
    if not bench_dir.is_dir():
        return
    wanted = (tuple(objectives), tuple(str(c) for c in constraints))
    for label_dir in sorted(d for d in bench_dir.iterdir() if d.is_dir()):
        files = sorted(_trial_files(label_dir))
        if not files:
            continue
        try:
            record = json.loads(files[0].read_text())
            there = (tuple(record.get("objectives") or ()), tuple(record.get("constraints") or ()))
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        if there != wanted:
            def say(problem):
                objectives_text = ",".join(problem[0]) or "one objective"
                return objectives_text + ("" if not problem[1] else " within " + " and ".join(problem[1]))
            raise UserError(f"{bench_dir} holds trials scored on {say(there)} (e.g. {files[0]}); this run is scored "
                            f"on {say(wanted)}: their regrets cannot be compared, and `report` would refuse the "
                            "folder; use another --out")


def _is_benchmark_folder(folder: Path) -> bool:
    return any(sub.is_dir() and _trial_files(sub) for sub in folder.iterdir())


def load_results(root, benchmarks=None, algos=None) -> Results:
    """Read every `trial-<k>.json` under `root` (a results folder, or one benchmark's folder in it).

    `benchmarks` / `algos`: optional lists restricting what is read (UserError if one has no
    results). Records are validated: the file name must match its record's benchmark, algo and trial,
    and all trials of one algorithm must share settings_hash and budget_s, and all algorithms of one
    benchmark its data checksum and L*; otherwise UserError naming the files.
    """
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"results folder not found: {root}; pass the --out folder of `nasbench run`")
    if _trial_files(root):
        raise UserError(f"{root} holds trial files directly; pass the results folder that contains "
                        "<benchmark>/<algo>/trial-<k>.json (the --out of `nasbench run`)")
    # RESULTS_DIR may be the --out folder or one benchmark's folder inside it
    if _is_benchmark_folder(root):
        bench_dirs = [root]
    else:
        bench_dirs = sorted(sub for sub in root.iterdir() if sub.is_dir() and _is_benchmark_folder(sub))
    found_files = {d.name: {a.name: _trial_files(a) for a in sorted(d.iterdir()) if a.is_dir() and _trial_files(a)}
                   for d in bench_dirs}
    _check_requested(found_files, root, benchmarks, algos)
    results = Results(root=root)
    for bench_dir in bench_dirs:
        benchmark = bench_dir.name
        if benchmarks and benchmark not in benchmarks:
            continue
        found = {}
        for algo, files in found_files[benchmark].items():
            if algos and algo not in algos:
                continue
            files = sorted(files, key=lambda p: int(TRIAL_FILE.match(p.name).group(1)))
            found[algo] = [_checked(load_trial(p), p, benchmark, algo) for p in files]
        if found:
            _check_consistent(bench_dir, found)
            results.runs[benchmark] = {a: found[a] for a in algo_order(found)}
    if not results.runs:
        raise UserError(f"no results for {', '.join(algos or [])} on {', '.join(benchmarks or [])} under {root}")
    return results


def load_many(roots, benchmarks=None, algos=None) -> Results:
    """`load_results` over several results folders, merged: runs of one benchmark from different folders
    are compared side by side. A label found in two folders is an error (name runs apart with
    `nasbench run --label`), as are results of one benchmark made from different data."""
    roots = [Path(r) for r in roots]
    if len(roots) == 1:
        return load_results(roots[0], benchmarks, algos)
    merged = Results(root=roots[0])
    origin: dict = {}
    for root in roots:
        loaded = load_results(root, benchmarks)
        for benchmark, per_label in loaded.runs.items():
            runs = merged.runs.setdefault(benchmark, {})
            for label, records in per_label.items():
                if label in runs:
                    raise UserError(f"{benchmark}/{label} is in both {origin[benchmark, label]} and {root}; "
                                    "give one of the runs another name with `nasbench run --label`")
                runs[label], origin[benchmark, label] = records, root
    for benchmark, runs in merged.runs.items():
        _check_consistent(Path(" + ".join(str(r) for r in roots)) / benchmark, runs)
    present = {label for runs in merged.runs.values() for label in runs}
    missing = [a for a in algos or [] if a not in present]
    if missing:
        raise UserError(f"no results for {', '.join(missing)} under {', '.join(map(str, roots))}; "
                        f"found: {', '.join(algo_order(present))}")
    if algos:
        for benchmark in list(merged.runs):
            kept = {label: rs for label, rs in merged.runs[benchmark].items() if label in algos}
            if kept:
                merged.runs[benchmark] = kept
            else:
                del merged.runs[benchmark]
    for benchmark in merged.runs:
        merged.runs[benchmark] = {a: merged.runs[benchmark][a] for a in algo_order(merged.runs[benchmark])}
    return merged


def _checked(record: dict, path: Path, benchmark: str, label: str) -> dict:
    if record["benchmark"] != benchmark or record_label(record) != label:
        raise UserError(f"result file {path}: holds {record['benchmark']}/{record_label(record)}, but lies in "
                        f"{benchmark}/{label}; move it back where `nasbench run` wrote it")
    return record


def _check_seeds(folder: Path, records: list) -> None:
    """A run seeds trial k with `seed + k`: every trial of a label has the same seed - trial, so no two
    share a seed; UserError naming the file otherwise (a copied or renamed file would count twice)."""
    first = records[0]
    offset = first["seed"] - first["trial"]
    for rec in records[1:]:
        if rec["seed"] - rec["trial"] != offset:
            raise UserError(f"{folder}: trial-{rec['trial']}.json has seed {rec['seed']}, but trial-{first['trial']} "
                            f"has seed {first['seed']} (a run seeds trial k with seed + k); a copied or renamed "
                            "file would count twice: delete it, then `nasbench run` redoes that trial")


def _check_consistent(bench_dir: Path, found: dict) -> None:
    for algo, records in found.items():
        _check_seeds(bench_dir / algo, records)
        first = records[0]
        for rec in records[1:]:
            for key, what in (("settings_hash", "settings"), ("budget_s", "budget"),
                              ("scores_checksum", "training-free score tables")):
                if rec.get(key) != first.get(key):
                    raise UserError(
                        f"{bench_dir / algo}: trials mix {what} (trial-{first['trial']}: {first.get(key)}, "
                        f"trial-{rec['trial']}: {rec.get(key)}); keep one run per folder")
    records = [r for rs in found.values() for r in rs]
    problems = {(tuple(r.get("objectives") or ()), tuple(r.get("constraints") or ())) for r in records}
    if len(problems) > 1:
        shown = sorted(" ".join(filter(None, [",".join(o) or "single objective", " ".join(c)])) for o, c in problems)
        raise UserError(f"{bench_dir}: trials were scored on different objectives or constraints ({'; '.join(shown)}); "
                        "their regrets cannot be compared: keep each problem in its own --out folder")
    for key, what in (("data_checksum", "data checksums"), ("l_star", "L* values")):
        values = {r.get(key) for r in records}
        if len(values) > 1:
            raise UserError(f"{bench_dir}: trials were run on different data ({what} {sorted(map(str, values))}); "
                            "results from different data cannot be compared")


def suite_task_folders(root: Path) -> list[Path]:
    """The folders under `root` that hold results themselves (`<benchmark>/<algo>/trial-<k>.json`): the
    task folders of `run --suite --out root`; sorted, empty when there are none."""
    try:
        children = sorted(p for p in Path(root).iterdir() if p.is_dir())
    except OSError:
        return []
    return [child for child in children if next(child.glob("*/*/trial-*.json"), None) is not None]


def _check_requested(found_files: dict, root: Path, benchmarks, algos) -> None:
    """UserError if the folder has no results, or none for a requested benchmark or algorithm."""
    if not found_files:
        from nasbench_cli.harness.run_lock import lock_holders

        running = lock_holders(root)
        if running:
            folder, pid = running[0]
            raise UserError(f"no trial has finished yet under {root}: a `nasbench run` (pid {pid}) is writing to "
                            f"{folder}; its trials are read here as they finish")
        tasks = suite_task_folders(root)
        if tasks:
            from nasbench_cli.suites.definition import shipped

            names = {t.name for t in tasks}
            suite = next((n for n, s in shipped().items() if names <= {t.name for t in s.tasks}), "NAME")
            raise UserError(f"{root} holds a suite's results ({len(tasks)} task folders: "
                            f"{', '.join(t.name for t in tasks[:4])}{', ...' if len(tasks) > 4 else ''}); read them "
                            f"with --suite {suite} (report, plot, export), or give one task's folder, e.g. {tasks[0]}")
        raise UserError(f"no result files under {root} (expected <benchmark>/<algo>/trial-<k>.json); "
                        f"run `nasbench run --out {root}` first")
    for name in benchmarks or []:
        if name not in found_files:
            raise UserError(f"no results for benchmark '{name}' under {root}; found: {', '.join(found_files)}")
    present = {a for b, per_algo in found_files.items() if not benchmarks or b in benchmarks for a in per_algo}
    for name in algos or []:
        if name not in present:
            raise UserError(f"no results for algorithm '{name}' under {root}; found: {', '.join(algo_order(present))}")


def parse_name_list(text: str | None) -> list[str] | None:
    """'a,b' -> ['a', 'b']; None or '' -> None."""
    if not text:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    return list(dict.fromkeys(names)) or None


def verify_against_data(results: Results) -> None:
    """Where the benchmark data the results were made from is at hand (same data checksum), check that
    their L* and best architecture are the benchmark's; UserError naming the folder if not (an edited
    L* would shift every regret). Results whose data is not here are left as they are."""
    from benchmarks.core.registry import load_benchmark

    for name, per_label in results.runs.items():
        first = next(iter(per_label.values()))[0]
        try:
            benchmark = load_benchmark(name)
        except UserError:
            continue                      # another benchmark name, or no data here: nothing to compare
        if benchmark.checksum != first.get("data_checksum"):
            continue
        for label, records in per_label.items():
            for record in records:
                where = f"{name}/{label} trial-{record['trial']}.json under {results.root}"
                if record.get("objectives") or record.get("constraints"):
                    _check_front_regrets(benchmark, record, where)
                    continue
                _check_regrets(benchmark, record, where)
                if record["l_star"] != benchmark.l_star or record["benchmark_best_arch"] != benchmark.best_id:
                    raise UserError(f"{name}/{label} trial-{record['trial']}.json under {results.root}: "
                                    f"L* {record['l_star']} / best architecture {record['benchmark_best_arch']} differ from "
                                    f"the benchmark's ({benchmark.l_star}, {benchmark.best_id}) for the same data; "
                                    "delete it, then `nasbench run` redoes that trial")


def _check_front_regrets(benchmark, record: dict, where: str) -> None:
    """A multi-objective or constrained record: recompute its regrets, incumbents, L*, normalisation
    and final front from the jobs it lists; UserError naming the file if anything differs."""
    from nasbench_cli.results.scoring import front_fields

    traj = record["trajectory"]
    recomputed = {key: list(traj[key]) for key in TRAJECTORY_KEYS}
    try:
        fields = front_fields(benchmark, record, recomputed)
    except (UserError, IndexError, TypeError, ValueError, KeyError):
        raise UserError(f"{where}: its objectives, constraints or jobs do not fit the benchmark; the file was edited") from None
    for key in ("regret", "incumbent", "incumbent_epoch"):
        if recomputed[key] != traj[key]:
            raise UserError(f"{where}: its {key} trajectory differs from the one its jobs give; the file was edited: "
                            "delete it, then `nasbench run` redoes that trial")
    for key, value in fields.items():
        if record.get(key) != value:
            raise UserError(f"{where}: {key} differs from what the benchmark gives ({record.get(key)!r} there); "
                            "the file was edited: delete it, then `nasbench run` redoes that trial")
    if record.get("final_regret") != (traj["regret"][-1] if traj["regret"] else None):
        raise UserError(f"{where}: final_regret is not its trajectory's last regret; the file was edited")


def _check_regrets(benchmark, record: dict, where: str) -> None:
    """Recompute a record's regrets from its incumbents (id, epoch) and the benchmark's test losses;
    UserError naming the file if any recorded regret, or the final one, differs (an edited file)."""
    import numpy as np

    traj = record["trajectory"]
    incumbents, epochs, regrets = traj["incumbent"], traj["incumbent_epoch"], traj["regret"]
    known = [k for k, inc in enumerate(incumbents) if inc is not None]
    if any(regrets[k] is not None for k in range(len(regrets)) if incumbents[k] is None):
        raise UserError(f"{where}: a regret is recorded before any incumbent; the file was edited")
    if known:
        search = benchmark.search
        try:
            rows = search.indices_of([incumbents[k] for k in known])
            cols = np.array([epochs[k] for k in known], dtype=np.int64) - 1
            expected = benchmark.test_loss[rows, cols] - benchmark.l_star
        except (UserError, IndexError, TypeError, ValueError):
            raise UserError(f"{where}: its incumbents are not architectures and epochs of the benchmark") from None
        recorded = np.array([regrets[k] for k in known], dtype=float)
        if not np.array_equal(recorded, expected, equal_nan=True):
            bad = int(np.flatnonzero(~((recorded == expected) | (np.isnan(recorded) & np.isnan(expected))))[0])
            raise UserError(f"{where}: regret {float(recorded[bad])!r} at job {known[bad]} differs from the test loss of its "
                            f"incumbent ({float(expected[bad])!r}); the file was edited: delete it, then `nasbench run` "
                            "redoes that trial")
    if record.get("final_regret") != (regrets[-1] if regrets else None):
        raise UserError(f"{where}: final_regret {record.get('final_regret')!r} is not its trajectory's last regret; "
                        "the file was edited")
