"""FT-PFN through ifbo (issue 48, item 3). Its weights are downloaded by ifbo from figshare, which these
machines cannot do, so: without them a run is refused in one line that says where to get them and what
to pass; the adapter's own work (FT-PFN's input limits: at most 10 hyperparameters in [0, 1], at most
1,000 curves, values in [0, 1] higher better, budgets in [0, 1]; freeze-thaw one epoch a step) is checked
with a stand-in for the pretrained model that records what it is given, and ifbo's own code (loading,
tokenisation, transformer, EI) runs end to end with an untrained model of FT-PFN's kind. The pretrained model
is not run here."""
import hashlib
import importlib.util
import json
import shutil
import sys

import numpy as np
import pytest

import cli_process

# found, not imported: importing it at collection would cost every test process seconds
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ifbo") is None, reason="ifbo is not installed")

from benchmarks.core.errors import UserError  # noqa: E402
from optimizers.registry import make_algorithm  # noqa: E402


def test_without_weights_the_run_is_one_line_saying_where_to_get_them(tmp_path, monkeypatch):
    monkeypatch.delenv("NASBENCH_FTPFN_WEIGHTS", raising=False)
    base = [sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "lora-zh-en", "--algo", "ftpfn",
            "--trials", "1", "--out", str(tmp_path / "r")]
    for extra in ([], ["--set", f"ftpfn.weights={tmp_path}"]):
        done = cli_process.run(base + extra, capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        line = done.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line
        assert "figshare" in line and "--set ftpfn.weights=DIR" in line and "NASBENCH_FTPFN_WEIGHTS" in line
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("trial-*.json"))


class StandIn:
    """Records the context and queries FT-PFN would get; its EI prefers the query whose hyperparameters sum
    highest (a fixed, recognisable choice)."""

    def __init__(self):
        self.calls = []

    def predict(self, context, query):
        import torch

        self.calls.append((context, query))

        class Result:
            def __init__(self, score):
                self.score = score

            def ei(self, best):
                assert 0.0 <= float(best) <= 1.0
                return torch.tensor([self.score])

        return [Result(float(q.hyperparameters.sum())) for q in query]


def test_the_adapter_respects_ftpfns_input_limits_and_steps_one_epoch(wt2, monkeypatch, tmp_path):
    from optimizers.learning_curve import ftpfn
    from nasbench_cli.harness.trial import run_algorithm
    from benchmarks.core.features import features
    from no_test_table import NoTestTable

    stand_in = StandIn()
    monkeypatch.setattr(ftpfn, "load_surrogate", lambda folder, version: stand_in)
    monkeypatch.setattr(ftpfn, "weights_folder", lambda settings: tmp_path)
    algorithm = make_algorithm("ftpfn", {"pool": "20"}, "wt2")
    assert algorithm.settings.features == "shipped-10d"            # wt2's stand-in: our 10-d graph2vec
    env = run_algorithm(NoTestTable(wt2.search), algorithm, 0, 30 * 3600.0,
                        features(wt2, algorithm.feature_kind), None, workers=2)
    h = env.history
    assert {e - f for e, f in zip(h.epochs, h.from_epoch)} <= {0, 1} and len(h.arch) > 40
    assert len(set(h.arch)) < len(h.arch)                           # some architectures trained further
    assert stand_in.calls
    for context, query in stand_in.calls:
        assert len({tuple(c.hyperparameters.tolist()) for c in context}) <= 1000
        for curve in context + query:
            x = curve.hyperparameters.numpy()
            assert x.shape == (10,) and x.min() >= 0 and x.max() <= 1
            assert curve.t.min() > 0 and curve.t.max() <= 1
        for curve in context:
            assert curve.y.min() >= 0 and len(curve.y) == len(curve.t)
            assert curve.y.max() <= 0.9 + 1e-6       # the best loss at 1 - headroom: room above it for EI
        assert all(float(q.t[0]) == 1.0 for q in query)               # EI at the full budget


def test_wide_encodings_become_ten_principal_components_in_the_unit_box():
    from optimizers.learning_curve.ftpfn import hyperparameters

    x = np.random.default_rng(0).normal(size=(200, 80))
    h = hyperparameters(x)
    assert h.shape == (200, 10) and h.min() == 0 and h.max() == 1
    narrow = hyperparameters(x[:, :5])
    assert narrow.shape == (200, 5)
    np.testing.assert_allclose(narrow.min(axis=0), 0) and np.testing.assert_allclose(narrow.max(axis=0), 1)


def test_a_folder_without_the_model_files_is_one_line(tmp_path):
    from optimizers.learning_curve.ftpfn import weights_folder

    (tmp_path / ".model").mkdir()
    algorithm = make_algorithm("ftpfn", {"weights": str(tmp_path)}, "lora-zh-en")
    with pytest.raises(UserError) as error:
        weights_folder(algorithm.settings)
    assert "bopfn_broken_unisep_1000curves_10params_2M.pt" in str(error.value) and "\n" not in str(error.value)
    for name in ("ftpfnv0.0.1.tar.gz", "bopfn_broken_unisep_1000curves_10params_2M.pt"):
        (tmp_path / ".model" / name).write_bytes(b"")
    assert weights_folder(algorithm.settings) == tmp_path / ".model"
    # where the weights live is not part of the result (not recorded, hashed or put in the label); what they
    # are is: the weights file's SHA-256, so results of other weights are never taken for the same run
    settings = algorithm.settings_dict()
    assert "weights" not in settings and settings["weights_sha256"] == hashlib.sha256(b"").hexdigest()
    assert make_algorithm("ftpfn", None, "lora-zh-en").settings_dict()["weights_sha256"] is None
    elsewhere = tmp_path / "copy"
    shutil.copytree(tmp_path / ".model", elsewhere / ".model")
    assert make_algorithm("ftpfn", {"weights": str(elsewhere)}, "lora-zh-en").settings_dict() == settings
    (elsewhere / ".model" / "bopfn_broken_unisep_1000curves_10params_2M.pt").write_bytes(b"other")
    assert make_algorithm("ftpfn", {"weights": str(elsewhere)}, "lora-zh-en").settings_dict() != settings
    json.dumps(settings)


def untrained_ftpfn(folder, seed: int):
    """A model of FT-PFN's kind built from ifbo's own classes (its transformer, its encoders, its bar
    distribution over [0, 1]), untrained and small, saved as ifbo saves the pretrained one: what ifbo's
    `FTPFN` loads and predicts with. Its predictions mean nothing; it makes ifbo's real code run."""
    import tarfile

    import torch
    from ifbo.bar_distribution import BarDistribution
    from ifbo.encoders import Linear, VariableNumFeaturesEncoder
    from ifbo.transformer import TransformerModel

    model_folder = folder / ".model"
    model_folder.mkdir(parents=True)
    torch.manual_seed(seed)
    model = TransformerModel(encoder=VariableNumFeaturesEncoder(Linear(12, 32), 12), ninp=32, nhead=2, nhid=64,
                             nlayers=2, y_encoder=Linear(1, 32), decoder_dict={"standard": (None, 100)})
    model.criterion = BarDistribution(torch.linspace(0, 1, 101))
    torch.save(model, model_folder / "bopfn_broken_unisep_1000curves_10params_2M.pt")
    with tarfile.open(model_folder / "ftpfnv0.0.1.tar.gz", "w:gz"):   # present, so ifbo downloads nothing
        pass
    return folder


def test_ifbos_own_model_and_prediction_code_run_end_to_end(wt2, tmp_path):
    """With a model file ifbo loads (an untrained one of FT-PFN's kind), ifbo's FTPFN, tokenisation,
    transformer and EI run inside a trial: the command line writes a complete result; the same weights and
    seed repeat the trial exactly; other weights choose other architectures (the model is what decides:
    with the best loss mapped to 1, the top of FT-PFN's range, every EI was 0 and both chose alike);
    a file that is not such a model is one line."""
    from benchmarks.core.features import features
    from nasbench_cli.harness.trial import run_algorithm
    from no_test_table import NoTestTable
    from optimizers.learning_curve import ftpfn

    first = untrained_ftpfn(tmp_path / "w0", seed=0)
    run = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "wt2", "--algo", "ftpfn",
                           "--set", f"ftpfn.weights={first}", "--trials", "1", "--budget-hours", "3", "--jobs", "1",
                           "--out", str(tmp_path / "r"), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    (trial_file,) = (tmp_path / "r").rglob("trial-*.json")
    trial = json.loads(trial_file.read_text())
    model_file = first / ".model" / "bopfn_broken_unisep_1000curves_10params_2M.pt"
    assert np.isfinite(trial["final_regret"]) and "weights" not in trial["settings"]
    assert trial["settings"]["weights_sha256"] == hashlib.sha256(model_file.read_bytes()).hexdigest()

    def history(weights):
        algorithm = make_algorithm("ftpfn", {"weights": str(weights), "pool": "20"}, "wt2")
        env = run_algorithm(NoTestTable(wt2.search), algorithm, 3, 3 * 3600.0, features(wt2, algorithm.feature_kind),
                            None)
        return env.history

    again = history(first)
    assert len(again.arch) > 10 and history(first) == again
    other = untrained_ftpfn(tmp_path / "w1", seed=1)
    assert history(other).arch != again.arch
    refused = cli_process.run([sys.executable, "-m", "nasbench_cli.main", "run", "--benchmark", "wt2", "--algo",
                               "ftpfn", "--set", f"ftpfn.weights={other}", "--trials", "1", "--budget-hours", "3",
                               "--out", str(tmp_path / "r")], capture_output=True, text=True)
    assert refused.returncode == 2 and "made with other settings" in refused.stderr
    assert "weights_sha256" in refused.stderr and "Traceback" not in refused.stderr

    broken = untrained_ftpfn(tmp_path / "w2", seed=0) / ".model" / "bopfn_broken_unisep_1000curves_10params_2M.pt"
    broken.write_bytes(broken.read_bytes()[:1000])                    # a download cut short
    with pytest.raises(UserError) as error:                           # in a trial: `error: ...`, exit 2
        ftpfn.load_surrogate(broken.parent, "0.0.1")
    line = str(error.value)
    assert "is not FT-PFN's model" in line and "figshare" in line and "\n" not in line
