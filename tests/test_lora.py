"""NMTLC's LoRA fine-tuning curves as multi-fidelity benchmarks lora-fr-en and lora-zh-en (issue 46, item 8),
on the real ../shared/hpo-nmt/nmtlc.jsonl."""
import json
import sys

import numpy as np
import pytest

from benchmarks.core.errors import DataError
from benchmarks.core.registry import load_benchmark
from benchmarks.core.space import architectures
from benchmarks.lora.table import FILE, bleu_curves, curve_lengths, data_folder, parse_corpus
from optimizers.registry import make_algorithm

import cli_process

SOURCE = data_folder() / FILE


def cli(*args):
    return cli_process.run([sys.executable, "-m", "nasbench_cli.main", *map(str, args)], capture_output=True, text=True)


def records(corpus):
    rows = [json.loads(line) for line in SOURCE.read_text().splitlines()]
    return [r for r in rows if r["task"] == "finetune" and r["dataset_name"] == corpus]


@pytest.mark.parametrize("name, count, top", [("lora-fr-en", 162, 74), ("lora-zh-en", 159, 28)])
def test_the_tables_hold_every_fine_tuning_curve(name, count, top):
    benchmark = load_benchmark(name)
    search, raw = benchmark.search, records(name[5:])
    assert search.n == len(raw) == count and search.max_epochs == top
    assert len(set(architectures(search))) == count
    assert (search.n_epochs == top).all() and (search.status == "OK").all()
    for row, record in enumerate(raw):            # row k is the corpus's k-th record, checkpoint k is epoch k
        length = len(record["perplexity_curve"])
        assert curve_lengths(search)[row] == length
        assert np.array_equal(search.val_loss[row, :length], record["perplexity_curve"])
        assert (search.val_loss[row, length:] == record["perplexity_optimal"]).all()   # the kept model, past the end
        assert np.array_equal(bleu_curves(search)[row, :length], record["bleu_curve"])
        assert np.isnan(bleu_curves(search)[row, length:]).all()
        assert search.val_loss[row, :length].min() == record["perplexity_optimal"]
        assert (search.wall_time_s[row, :length] == 1).all() and (search.wall_time_s[row, length:] == 0).all()
    assert np.array_equal(benchmark.test_loss, search.val_loss)
    assert benchmark.l_star == min(r["perplexity_optimal"] for r in raw)


def test_a_run_asked_past_its_curve_end_is_finished_with_its_kept_model_and_charged_what_it_trained():
    from benchmarks.core.environment import Environment

    benchmark = load_benchmark("lora-fr-en")
    search = benchmark.search
    row = int(np.argmin(curve_lengths(search)))
    length, curve = int(curve_lengths(search)[row]), search.val_loss[row]
    env = Environment(search)
    half = env.train(row, length - 2)
    assert half.status == "OK" and half.cost_s == length - 2
    done = env.train(row, 74)                     # the top fidelity: early stopping ended it at `length`
    assert done.status == "OK" and not done.diverged and done.epochs == done.requested_epochs == 74
    assert done.cost_s == 2 and env.time_s == length                # only the checkpoints it trained
    assert done.last_val_loss == curve[:length].min()
    assert env.incumbent == (row, int(np.argmin(curve[:length])) + 1)   # the recorded checkpoint, not a padded one
    from nasbench_cli.api import learning_curve

    shown = learning_curve(benchmark, int(search.ids[row]))           # the API shows the curve as recorded
    assert shown["epochs"] == length and shown["val_logppl"] == curve[:length].tolist()


def test_hyperband_and_asha_take_their_top_rung_from_the_table():
    assert make_algorithm("hb", None, "lora-zh-en").settings.max_epochs == 28
    assert make_algorithm("asha", None, "lora-fr-en").settings.max_epochs == 74
    assert make_algorithm("hb", None, "ptb").settings.max_epochs == 50
    assert make_algorithm("rs", None, "lora-zh-en").settings.epochs == 28       # full fidelity
    assert make_algorithm("re", None, "lora-zh-en").settings.epochs == 28
    assert make_algorithm("re", None, "bert").settings.epochs == 1
    assert make_algorithm("hb", {"max_epochs": "9"}, "lora-zh-en").settings.max_epochs == 9   # --set wins
    ptb, lora = make_algorithm("lcbo", None, "ptb").settings, make_algorithm("lcbo", None, "lora-fr-en").settings
    assert (ptb.metric, ptb.rungs) == ("hidden_covariance_l1", "1,2,9,50") and (lora.metric, lora.rungs) == (None, "1,2,13,74")


def test_the_multi_fidelity_set_runs_and_a_fixed_epoch_count_is_refused(tmp_path):
    out = tmp_path / "r"
    refused = cli("run", "--benchmark", "lora", "--algo", "hb,rs50e", "--trials", "1", "--out", out)
    assert refused.returncode == 2 and "rs50e trains to 50 epochs (epochs), but lora-zh-en records at most 28" \
        in refused.stderr and not out.exists()            # checked on both tables before anything ran
    done = cli("run", "--benchmark", "lora", "--algo", "hb,asha,ahb,rs,re,tpe", "--trials", "2", "--budget-evals", "120",
               "--out", out, "--json")
    assert done.returncode == 0, done.stderr
    for run in json.loads(done.stdout)["benchmarks"]:
        assert run["budget_checkpoints"] == 120 and set(run["algorithms"]) == {"hb", "asha", "ahb", "rs", "re", "tpe"}
        search = load_benchmark(run["benchmark"]).search
        length = dict(zip(search.ids.tolist(), curve_lengths(search).tolist()))
        for label in run["algorithms"]:
            for path in (out / run["benchmark"] / label).glob("trial-*.json"):
                record = json.loads(path.read_text())
                trajectory, from_epoch = record["trajectory"], record["jobs"]["from_epoch"]
                trained = [min(e, length[a]) - min(f, length[a])           # nothing is charged past a curve's end
                           for a, e, f in zip(trajectory["arch"], trajectory["epochs"], from_epoch)]
                assert sum(trained) <= 120 and record["simulated_time_s"] == sum(trained)   # a unit a checkpoint
    lcbo = cli("run", "--benchmark", "lora-zh-en", "--algo", "lcbo", "--trials", "2", "--out", out)
    assert lcbo.returncode == 0, lcbo.stderr            # its epochs-only mode, chosen and recorded
    settings = json.loads((out / "lora-zh-en" / "lcbo" / "trial-0.json").read_text())["settings"]
    assert settings["metric"] is None and settings["rungs"] == "1,2,5,28"
    scored = cli("run", "--benchmark", "lora-fr-en", "--algo", "lcbo", "--set", "lcbo.metric=hidden_covariance_l1",
                 "--out", out)
    assert scored.returncode == 2 and "lcbo cannot run on lora-fr-en: it needs proxies" in scored.stderr


def test_data_info_characterises_the_curves():
    done = cli("data", "info", "--benchmark", "lora-zh-en", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    raw = records("zh-en")
    lengths = [len(r["perplexity_curve"]) for r in raw]
    at = [int(np.argmin(r["perplexity_curve"])) + 1 for r in raw]
    assert summary["curve_length"] == {"min": min(lengths), "median": float(np.median(lengths)), "max": max(lengths)}
    assert summary["lowest_at_last_checkpoint"] == sum(a == n for a, n in zip(at, lengths)) == 30
    assert summary["checkpoints_to_train_all"] == sum(lengths) == 2430


def test_bad_records_are_one_line_naming_file_and_line(tmp_path):
    folder = tmp_path / "hpo-nmt"
    folder.mkdir()
    lines = SOURCE.read_text().splitlines()
    first = next(k for k, line in enumerate(lines) if '"finetune"' in line and '"fr-en"' in line)
    record = json.loads(lines[first])
    record["perplexity_curve"][2] = "x"
    lines[first] = json.dumps(record)
    (folder / FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"line {first + 1}: perplexity_curve must be a non-empty list of finite numbers"):
        parse_corpus(folder / FILE, "lora-fr-en")
    done = cli("data", "info", "--benchmark", "lora-fr-en", "--data-dir", folder)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and f"line {first + 1}" in done.stderr
