"""The CLI skeleton: fast help, exit codes, data info and query on the real data."""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from nasbench_cli.main import group

import cli_process


def run_cli(*args):
    """Run `nasbench ARGS` in a subprocess (the real entry point, with its error handling)."""
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *args], capture_output=True, text=True,
                          env={**os.environ})


def test_help_imports_no_heavy_library():
    code = ("import sys; from nasbench_cli.main import group; from click.testing import CliRunner; "
            "r = CliRunner().invoke(group, ['--help']); assert r.exit_code == 0, r.output; "
            "heavy = [m for m in ('numpy', 'xgboost', 'matplotlib', 'torch', 'smac', 'hyperopt', 'gensim', "
            "'sklearn', 'scipy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_version():
    result = CliRunner().invoke(group, ["--version"])
    assert result.exit_code == 0 and "0.1.0" in result.output


def test_data_info_json(ptb):
    result = run_cli("data", "info", "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["architectures"] == 14322 and info["status"]["OK"] == 11598
    assert round(info["l_star"], 4) == 4.3626 and info["best_arch"] == 1000001
    assert len(info["checksum_sha256"]) == 64 and info["cache_path"].endswith(".npz")


def test_query_lstm_at_epoch_50(ptb):
    result = run_cli("query", "--arch", "1000001", "--epochs", "50", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert round(record["test_perplexity"], 1) == 78.9
    assert round(record["best_test_perplexity"], 1) == 78.5
    assert record["num_params"] == 10896400 and record["status"] == "OK"
    assert record["wall_time_s"] == pytest.approx(float(ptb.search.wall_time_s[ptb.search.index_of(1000001)].sum()))
    text = run_cli("query", "--arch", "1000001", "--epochs", "50").stdout
    assert "test 78.9 perplexity" in text


@pytest.mark.parametrize("args,message", [
    (["query", "--arch", "17"], "unknown architecture id 17"),
    (["query", "--arch", "1000001", "--epochs", "0"], "--epochs must be in 1..50"),
    (["data", "info", "--data-dir", "/no/such/folder"], "data folder not found: /no/such/folder"),
    (["query"], "give exactly one of --arch ID or --recipe"),
    (["run", "--algo", "nosuch", "--trials", "1"], "unknown algorithm nosuch"),
])
def test_user_mistakes_are_one_line_and_exit_2(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_unknown_command_exits_2():
    assert run_cli("nosuchcommand").returncode == 2


RENAMED_LSTM = {
    "gate_in": {"op": "linear", "input": ["h_prev_0", "x"]}, "a1": {"op": "activation_tanh", "input": ["gate_in"]},
    "gate_j": {"op": "linear", "input": ["x", "h_prev_0"]}, "a2": {"op": "activation_sigm", "input": ["gate_j"]},
    "forget": {"op": "linear", "input": ["h_prev_0", "x"]}, "a3": {"op": "activation_sigm", "input": ["forget"]},
    "out": {"op": "linear", "input": ["x", "h_prev_0"]}, "a4": {"op": "activation_tanh", "input": ["out"]},
    "keep": {"op": "elementwise_prod", "input": ["h_prev_1", "a3"]},
    "write": {"op": "elementwise_prod", "input": ["a1", "a2"]},
    "h_new_1": {"op": "elementwise_sum", "input": ["write", "keep"]},
    "squash": {"op": "activation_tanh", "input": ["h_new_1"]},
    "h_new_0": {"op": "elementwise_prod", "input": ["a4", "squash"]},
}


def test_query_by_recipe_finds_a_renamed_lstm(ptb, tmp_path):
    path = tmp_path / "lstm.json"
    path.write_text(json.dumps(RENAMED_LSTM))
    result = run_cli("query", "--recipe", str(path), "--epochs", "50", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["recepie_id"] == 1000001


def test_query_by_recipe_valid_but_absent_exits_1_invalid_exits_2(ptb):
    absent = dict(RENAMED_LSTM, a4={"op": "activation_leaky_relu", "input": ["out"]})
    result = run_cli("query", "--recipe", json.dumps(absent))
    assert result.returncode == 1 and "valid but not in benchmark 'ptb'" in result.stderr
    broken = dict(RENAMED_LSTM, a4={"op": "activation_cube", "input": ["out"]})
    result = run_cli("query", "--recipe", json.dumps(broken))
    assert result.returncode == 2 and "activation_cube" in result.stderr and "Traceback" not in result.stderr


def test_query_an_architecture_with_no_recorded_epoch(ptb):
    empty = [int(i) for i, n in zip(ptb.search.ids, ptb.search.n_epochs) if n == 0]
    assert len(empty) == 65
    result = run_cli("query", "--arch", str(empty[0]), "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["epochs_recorded"] == 0 and record["note"].startswith("no epoch recorded")


@pytest.mark.parametrize("args", [["space", "validate"], ["query", "--recipe"], ["space", "show", "--recipe"]])
def test_deeply_nested_recipe_json_is_one_line(args, ptb, tmp_path):
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    result = run_cli(*args, str(nested))
    assert result.returncode == 2 and "nested too deeply" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_cache_folder_that_is_a_file_is_one_line(tmp_path):
    blocker = tmp_path / "cache-file"
    blocker.write_text("x")
    result = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "data", "info"], capture_output=True,
                            text=True, env={**os.environ, "NASBENCH_CACHE": str(blocker / "sub")})
    assert result.returncode == 2 and "cannot use the cache folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_figures_and_baselines_into_an_unwritable_folder_are_one_line(tmp_path, ptb):
    out = tmp_path / "results"
    assert run_cli("run", "--algo", "rs50e", "--trials", "2", "--budget-hours", "20", "--out", str(out)).returncode == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for args in (["plot", str(out), "--out", str(blocker / "figs")],
                 ["check", str(out), "--write-baseline", str(blocker / "base.json")]):
        result = run_cli(*args)
        assert result.returncode == 2 and "cannot write" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
