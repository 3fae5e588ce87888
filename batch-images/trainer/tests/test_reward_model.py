"""The reward model learns what the teacher said, in both forms, and is reproducible."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flywheel_trainer.__main__ import main, run_job
from flywheel_trainer.features import featurize, fnv1a32
from flywheel_trainer.reward_model import TrainConfig, TrainingDataError, load, prefer_a, save, score_texts, train

GOOD = ["asked the user which file they meant before editing", "ran the tests and reported the failure honestly", "kept the commit message short and plain", "asked a clarifying question first"]
BAD = ["rewrote the whole module without asking", "added emojis to every commit message 🎉", "deleted the failing test to make it pass", "ignored the instruction file and guessed"]

ROOT = Path(__file__).resolve().parents[1]


def pointwise_records(n=40):
    out = []
    for i in range(n):
        good = i % 2 == 0
        text = (GOOD if good else BAD)[(i // 2) % 4] + f" case {i}"
        out.append({"id": f"r{i}", "text": text, "targets": {"asks-first": 1 if good else 0, "honest": 1 if good or i % 3 == 0 else 0}})
    return out


def pairwise_records(n=30):
    out = []
    for i in range(n):
        g, b = GOOD[i % 4] + f" {i}", BAD[i % 4] + f" {i}"
        out.append({"id": f"p{i}", "a": g, "b": b, "target": 1} if i % 2 == 0 else {"id": f"p{i}", "a": b, "b": g, "target": 0})
    return out


def test_fnv_and_features_are_the_documented_ones():
    assert fnv1a32(b"") == 0x811C9DC5
    assert fnv1a32(b"a") == 0xE40C292C
    vec = featurize("Hello, hello world", 64)
    assert abs(sum(v * v for v in vec) - 1) < 1e-9
    assert featurize("", 8) == [0.0] * 8


def test_training_lowers_the_loss_and_separates_a_learnable_signal():
    trained = train(pointwise_records(), TrainConfig(epochs=150, dim=1024))
    assert trained.losses[-1] < trained.losses[0] * 0.2
    scores = score_texts(trained.net, trained.metadata, ["asked the user which file they meant first", "deleted the failing test to make it pass quickly"])
    assert scores[0]["asks-first"] > 0.8
    assert scores[1]["asks-first"] < 0.2


def test_masked_labels_do_not_count():
    records = [{"text": "yes yes", "targets": {"a": 1}}, {"text": "no no", "targets": {"b": 0}}]
    trained = train(records, TrainConfig(epochs=20, dim=256))
    assert trained.metadata["labels"] == ["a", "b"]


def test_pairwise_orientation_follows_the_target():
    trained = train(pairwise_records(), TrainConfig(kind="pairwise", epochs=150, dim=1024))
    assert trained.losses[-1] < trained.losses[0]
    good, bad = "asked a clarifying question first today", "added emojis to every commit message"
    p_good_first, p_bad_first = prefer_a(trained.net, trained.metadata, [(good, bad), (bad, good)])
    assert p_good_first > 0.8
    assert p_bad_first < 0.2
    assert abs(p_good_first + p_bad_first - 1) < 1e-5


def test_same_seed_same_weights_other_seed_other_weights(tmp_path):
    a = save(train(pointwise_records(), TrainConfig(seed=7, epochs=30, dim=512)), tmp_path / "a")
    b = save(train(pointwise_records(), TrainConfig(seed=7, epochs=30, dim=512)), tmp_path / "b")
    c = save(train(pointwise_records(), TrainConfig(seed=8, epochs=30, dim=512)), tmp_path / "c")
    assert a["sha256"] == b["sha256"]
    assert a["sha256"] != c["sha256"]
    assert hashlib.sha256((tmp_path / "a" / "model.safetensors").read_bytes()).hexdigest() == a["sha256"]


def test_saved_model_scores_as_trained(tmp_path):
    trained = train(pointwise_records(), TrainConfig(epochs=40, dim=512))
    save(trained, tmp_path / "m")
    net, meta = load(tmp_path / "m")
    texts = ["asked first", "guessed"]
    assert score_texts(net, meta, texts) == score_texts(trained.net, trained.metadata, texts)


def test_bad_records_are_refused():
    with pytest.raises(TrainingDataError, match="targets"):
        train([{"text": "x"}], TrainConfig())
    with pytest.raises(TrainingDataError, match="'a', 'b'"):
        train([{"a": "x"}], TrainConfig(kind="pairwise"))
    with pytest.raises(TrainingDataError, match="no training records"):
        train([], TrainConfig())
    with pytest.raises(TrainingDataError, match="epochs"):
        train(pointwise_records(2), TrainConfig(epochs=0))


def test_the_job_reads_and_writes_blobs_under_the_data_dir(tmp_path):
    blobs = tmp_path / "blobs" / "judges" / "derive" / "d1"
    blobs.mkdir(parents=True)
    (blobs / "teacher.jsonl").write_text("\n".join(json.dumps(r) for r in pointwise_records(12)) + "\n")
    meta = run_job({"FLYWHEEL_DATA_DIR": str(tmp_path), "FLYWHEEL_TRAIN_DATA_KEY": "judges/derive/d1/teacher.jsonl", "FLYWHEEL_MODEL_KEY": "judges/derive/d1/model", "FLYWHEEL_EPOCHS": "10"})
    assert meta["examples"] == 12
    assert (tmp_path / "blobs" / "judges/derive/d1/model/model.safetensors").exists()
    assert json.loads((tmp_path / "blobs" / "judges/derive/d1/model/metadata.json").read_text())["trainingData"] == "judges/derive/d1/teacher.jsonl"


def test_the_cli_trains_and_scores_in_a_process(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in pairwise_records(10)) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-m", "flywheel_trainer", "train", "--data", str(data), "--out", str(tmp_path / "m"), "--kind", "pairwise", "--epochs", "20"], check=True, env=env, capture_output=True)
    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "x", "a": "asked first", "b": "guessed"}) + "\n")
    out = subprocess.run([sys.executable, "-m", "flywheel_trainer", "score", "--model", str(tmp_path / "m"), "--input", str(items)], check=True, env=env, capture_output=True, text=True)
    line = json.loads(out.stdout.strip())
    assert line["id"] == "x" and 0 <= line["preferA"] <= 1


def test_the_cli_refuses_missing_data_with_exit_2(tmp_path, capsys):
    assert main(["train", "--data", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "z")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def test_the_job_exits_2_for_a_missing_blob(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FLYWHEEL_TRAIN_DATA_KEY", "judges/derive/none/teacher.jsonl")
    monkeypatch.setenv("FLYWHEEL_MODEL_KEY", "judges/derive/none/model")
    assert main(["job"]) == 2
    assert "no blob judges/derive/none/teacher.jsonl" in capsys.readouterr().err


def test_an_environment_error_is_not_bad_input_so_batch_retries_it(tmp_path, monkeypatch, capsys):
    import errno

    from flywheel_trainer import __main__ as entry

    blobs = tmp_path / "blobs" / "judges" / "d2"
    blobs.mkdir(parents=True)
    (blobs / "teacher.jsonl").write_text("\n".join(json.dumps(r) for r in pointwise_records(8)) + "\n", encoding="utf-8")

    def disk_full(self, key, src):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(entry.Blobs, "put", disk_full)
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FLYWHEEL_TRAIN_DATA_KEY", "judges/d2/teacher.jsonl")
    monkeypatch.setenv("FLYWHEEL_MODEL_KEY", "judges/d2/model")
    monkeypatch.setenv("FLYWHEEL_EPOCHS", "5")
    assert main(["job"]) == entry.EXIT_RETRYABLE != entry.EXIT_BAD_INPUT
    err = json.loads(capsys.readouterr().err.strip())
    assert err["retryable"] is True and "No space left" in err["message"]


def test_utf8_data_trains_whatever_the_locale(tmp_path):
    # The C locale without coercion reads files as ASCII unless the trainer says utf-8.
    data = tmp_path / "emoji.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in pointwise_records(8)) + "\n", encoding="utf-8")
    assert "🎉" in data.read_text(encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    out = subprocess.run([sys.executable, "-m", "flywheel_trainer", "train", "--data", str(data), "--out", str(tmp_path / "m"), "--epochs", "5"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "m" / "metadata.json").read_text(encoding="utf-8"))["examples"] == 8


def test_data_that_is_not_utf8_is_bad_input(tmp_path, capsys):
    data = tmp_path / "latin1.jsonl"
    data.write_bytes(json.dumps({"text": "caf\u00e9", "targets": {"a": 1}}, ensure_ascii=False).encode("latin-1") + b"\n")
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "z")]) == 2
    assert "not UTF-8" in capsys.readouterr().err
