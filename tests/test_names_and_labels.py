"""Names a user types: any case, closest-name hints; runs with changed settings never pass as default ones."""
import json

import pytest

from test_plot import run_cli


@pytest.mark.parametrize("args, hint", [
    (["--algo", "hbb"], "unknown algorithm hbb (did you mean 'hb' or 'phb'?)"),
    (["--algo", "rs50"], "(did you mean 'rs50e' or 'rs10e'?)"),
    (["--algo", "lcob"], "(did you mean 'lcbo'?)"),
    (["--algo", "hb", "--benchmark", "ptbb"], "'ptbb' is not one of bert, gpt-l, gpt-m, gpt-s, lora-fr-en, lora-zh-en, nmt-en-ja, nmt-en-ja-updates, nmt-ja-en, nmt-ja-en-updates, nmt-ru-en, nmt-ru-en-updates, nmt-so-en, nmt-so-en-updates, nmt-sw-en, nmt-sw-en-updates, nmt-zh-en, nmt-zh-en-updates, ptb, wt2, lora, nmt, nmt-updates (did you mean 'ptb'?)"),
])
def test_misspelt_names_get_the_closest_ones(tmp_path, capsys, args, hint):
    code, _, err = run_cli(capsys, "run", *args, "--trials", "1", "--out", tmp_path)
    assert code == 2 and hint in err.strip().splitlines()[-1]     # click's own errors come after its usage line


def test_names_are_case_insensitive(tmp_path, capsys, ptb):
    code, out, err = run_cli(capsys, "run", "--algo", "HB,Rs50E", "--benchmark", "PTB", "--trials", "1",
                             "--budget-hours", "5", "--out", tmp_path, "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["benchmark"] == "ptb" and sorted(payload["algorithms"]) == ["hb", "rs50e"]
    assert sorted(p.name for p in (tmp_path / "ptb").iterdir() if not p.name.startswith(".")) == ["hb", "rs50e"]


def test_changed_settings_change_the_label(tmp_path, capsys, ptb):
    code, out, err = run_cli(capsys, "run", "--algo", "hb,asha", "--set", "eta=4", "--trials", "1",
                             "--budget-hours", "20", "--out", tmp_path, "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["algorithms"]) == ["asha+eta-4", "hb+eta-4"]
    # the default value is no change; a per-algorithm --set only renames that one
    code, out, err = run_cli(capsys, "run", "--algo", "hb,asha", "--set", "eta=3", "--set", "asha.max_epochs=27",
                             "--trials", "1", "--budget-hours", "20", "--out", tmp_path, "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["algorithms"]) == ["asha+max_epochs-27", "hb"]
    labels = {json.loads(p.read_text())["label"] for p in (tmp_path / "ptb").rglob("trial-*.json")}
    assert labels == {"hb", "hb+eta-4", "asha+eta-4", "asha+max_epochs-27"}
    # --label still names a run as the user wants
    code, out, err = run_cli(capsys, "run", "--algo", "hb", "--set", "eta=4", "--label", "hb-eta4", "--trials", "1",
                             "--budget-hours", "20", "--out", tmp_path, "--json")
    assert code == 0 and list(json.loads(out)["algorithms"]) == ["hb-eta4"]


def test_a_stand_in_feature_kind_is_refused_by_its_name(tmp_path, capsys, wt2):
    code, _, err = run_cli(capsys, "run", "--algo", "bo10d", "--benchmark", "wt2", "--set", "features=shipped-10d",
                           "--trials", "1", "--out", tmp_path)
    assert code == 2 and "wt2 ships no graph2vec features" in err and "--set features=g2v-10d" in err
