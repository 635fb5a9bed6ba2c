"""A user's own optimizer, from outside nasbench: a plain file, a module on the path, and an installed
package registering an entry point. Each runs through `nasbench run`, `report`, `plot` and `check`
without any file of nasbench edited; broken plugins are one line naming them; resume refuses files
made by another version of the plugin's code; a user's `optimizers/` folder never shadows ours."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

OPTIMIZER = '''
from dataclasses import dataclass

from nasbench import Algorithm, Job


class RandomTen(Algorithm):
    """Random architectures, each trained EPOCHS epochs."""
    name = "{name}"
    description = "random search, {epochs} epochs each (a user's plugin)"

    @dataclass(frozen=True)
    class Settings:
        epochs: int = {epochs}

    def start(self, inputs):
        self.order = iter(inputs.rng.permutation(inputs.search.n).tolist())

    def ask(self):
        return Job(next(self.order), self.settings.epochs)
'''


def nasbench(*args, cwd, env=None, check=True):
    run = subprocess.run([str(BIN / "nasbench"), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **(env or {})})
    if check:
        assert run.returncode == 0, run.stdout + run.stderr
    return run


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def user_repo(tmp_path):
    """A separate repository: a pip-installable package `my_nas` with an entry point, and a plain file."""
    repo = tmp_path / "my-repo"
    write(repo / "pyproject.toml", '''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "my-nas"
        version = "0.1.0"

        [project.entry-points."nasbench.optimizers"]
        myopt = "my_nas.search:RandomTen"

        [tool.setuptools]
        packages = ["my_nas"]
    ''')
    write(repo / "my_nas" / "__init__.py", "")
    write(repo / "my_nas" / "search.py", OPTIMIZER.format(name="myopt", epochs=10))
    write(repo / "plain_opt.py", OPTIMIZER.format(name="plain", epochs=50))
    write(repo / "optimizers" / "__init__.py", "raise RuntimeError('the user folder optimizers/ was imported')\n")
    return repo


def install(repo: Path, target: Path) -> dict:
    """pip-install the package into `target` (not into the test environment); its env for nasbench."""
    run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                          "--target", str(target), str(repo)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return {"PYTHONPATH": str(target)}


@pytest.mark.slow
def test_an_installed_plugin_is_listed_run_reported_plotted_and_gated(user_repo, tmp_path, data_dir):
    env = {**install(user_repo, tmp_path / "site"), "NASBENCH_DATA": str(data_dir)}
    listing = json.loads(nasbench("list", "--json", cwd=user_repo, env=env).stdout)
    assert listing["plugins"]["myopt"]["distribution"] == "my-nas"
    assert listing["plugins"]["myopt"]["version"] == "0.1.0"

    good = tmp_path / "good"
    nasbench("run", "--algo", "myopt,hb", "--trials", 8, "--budget-hours", 40, "--jobs", 2, "--out", good,
             cwd=user_repo, env=env)
    record = json.loads((good / "ptb" / "myopt" / "trial-0.json").read_text())
    assert record["algo"] == "myopt" and record["settings"] == {"epochs": 10}
    assert record["algorithm_source"]["kind"] == "entry-point"
    assert record["algorithm_source"]["distribution"] == "my-nas"
    assert record["algorithm_source"]["class"] == "my_nas.search.RandomTen"
    report = json.loads(nasbench("report", good, "--json", cwd=user_repo, env=env).stdout)
    assert set(report["benchmarks"]["ptb"]["algorithms"]) == {"myopt", "hb"}
    figures = json.loads(nasbench("plot", good, "--out", tmp_path / "fig", "--format", "png", "--json",
                                  cwd=user_repo, env=env).stdout)["files"]
    assert any("regret-vs-time" in f for f in figures)
    baseline = tmp_path / "baseline.json"
    nasbench("check", good, "--write-baseline", baseline, cwd=user_repo, env=env)
    assert nasbench("check", good, "--baseline", baseline, cwd=user_repo, env=env).returncode == 0

    # a planted regression in the user's code (1 epoch instead of 10), same settings fields: caught
    search = user_repo / "my_nas" / "search.py"
    search.write_text(search.read_text().replace("return Job(next(self.order), self.settings.epochs)",
                                                 "return Job(next(self.order), 1)"))
    env = {**install(user_repo, tmp_path / "site2"), "NASBENCH_DATA": str(data_dir)}
    refused = nasbench("run", "--algo", "myopt", "--trials", 8, "--budget-hours", 40, "--out", good,
                       cwd=user_repo, env=env, check=False)
    assert refused.returncode == 2 and "another version of the algorithm's code" in refused.stderr
    bad = tmp_path / "bad"
    nasbench("run", "--algo", "myopt,hb", "--trials", 8, "--budget-hours", 40, "--jobs", 2, "--out", bad,
             cwd=user_repo, env=env)
    gate = nasbench("check", bad, "--baseline", baseline, "--json", cwd=user_repo, env=env, check=False)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    verdict = {c["algo"]: c["status"] for c in json.loads(gate.stdout)["checks"]}
    assert verdict["myopt"] != "ok" and verdict["hb"] == "ok"


def test_file_and_module_plugins_run_without_installing(user_repo, tmp_path, data_dir):
    env = {"NASBENCH_DATA": str(data_dir)}
    out = tmp_path / "res"
    nasbench("run", "--algo", "plain_opt.py:RandomTen", "--trials", 2, "--budget-hours", 20, "--jobs", 1,
             "--out", out, cwd=user_repo, env=env)
    nasbench("run", "--algo", "my_nas.search:RandomTen", "--trials", 2, "--budget-hours", 20, "--jobs", 1,
             "--out", out, "--set", "myopt.epochs=3", "--label", "myopt-3e", cwd=user_repo, env=env)
    plain = json.loads((out / "ptb" / "plain" / "trial-1.json").read_text())
    assert plain["algorithm_source"]["kind"] == "file"
    assert plain["algorithm_source"]["class"] == "plain_opt.py:RandomTen"
    assert len(plain["algorithm_source"]["sha256"]) == 16
    module = json.loads((out / "ptb" / "myopt-3e" / "trial-0.json").read_text())
    assert module["algorithm_source"]["kind"] == "module" and module["settings"] == {"epochs": 3}
    assert max(module["trajectory"]["epochs"]) == 3    # fewer only where a log ends earlier
    report = json.loads(nasbench("report", out, "--json", cwd=user_repo, env=env).stdout)
    assert set(report["benchmarks"]["ptb"]["algorithms"]) == {"plain", "myopt-3e"}


def test_broken_plugins_are_one_line_naming_them(user_repo, tmp_path, data_dir):
    env = {"NASBENCH_DATA": str(data_dir)}
    write(user_repo / "broken.py", '''
        from dataclasses import dataclass
        from nasbench import Algorithm

        class NotAnAlgorithm:
            pass

        class FailsInAsk(Algorithm):
            name = "fails"

            def ask(self):
                raise ValueError("my bug")
    ''')
    write(user_repo / "unimportable.py", "import a_module_that_does_not_exist\n")
    out = tmp_path / "res"
    for spec, needle in (("unimportable.py:X", "failed to import: ModuleNotFoundError"),
                         ("broken.py:NotAnAlgorithm", "is not a class derived from nasbench's Algorithm"),
                         ("broken.py:Missing", "has no attribute 'Missing'"),
                         ("no_such_package.mod:X", "failed to import"),
                         ("missing.py:X", "no such file")):
        run = nasbench("run", "--algo", spec, "--out", out, cwd=user_repo, env=env, check=False)
        assert run.returncode == 2, spec
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and spec.split(":")[0] in lines[0], run.stderr
        assert "Traceback" not in run.stderr
    # a bug inside a trial: each trial fails with one line naming the plugin and the line, exit 1
    run = nasbench("run", "--algo", "broken.py:FailsInAsk", "--trials", 2, "--jobs", 1, "--out", out,
                   cwd=user_repo, env=env, check=False)
    assert run.returncode == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and all("fails trial" in e and "ValueError: my bug" in e and "broken.py:" in e
                                    and "in ask" in e for e in errors)
    assert not list((out / "ptb").rglob("trial-*.json"))


def test_a_plugin_cannot_take_a_built_in_name(user_repo, tmp_path, data_dir):
    write(user_repo / "impostor.py", OPTIMIZER.format(name="hb", epochs=10))
    run = nasbench("run", "--algo", "impostor.py:RandomTen", "--out", tmp_path, cwd=user_repo,
                   env={"NASBENCH_DATA": str(data_dir)}, check=False)
    assert run.returncode == 2 and "a built-in algorithm's name" in run.stderr


def test_import_nasbench_uses_its_own_packages_next_to_a_users_optimizers_folder(user_repo):
    code = "import nasbench, optimizers, benchmarks; print(optimizers.__file__); print(nasbench.Algorithm)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=user_repo)
    assert run.returncode == 0, run.stderr
    ours = Path(__file__).resolve().parent.parent / "optimizers" / "__init__.py"
    assert Path(run.stdout.splitlines()[0]).resolve() == ours
    clash = subprocess.run([sys.executable, "-c", "import sys; sys.modules['optimizers'] = type(sys)('optimizers'); "
                            "sys.modules['optimizers'].__file__ = '/elsewhere/optimizers/__init__.py'; import nasbench"],
                           capture_output=True, text=True, cwd=user_repo)
    assert clash.returncode != 0 and "rename your folder" in clash.stderr
