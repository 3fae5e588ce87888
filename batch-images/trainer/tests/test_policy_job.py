"""The policy job end to end over a tiny dataset written with pyarrow: blobs in, metrics and checkpoint out, resume,
exit codes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

from flywheel_trainer.__main__ import EXIT_BAD_INPUT, main
from flywheel_trainer.policy.job import check_resources
from flywheel_trainer.policy.shards import ShardDataError, collate, read_shard
from flywheel_trainer.policy.train import TrainerConfig, TrainerConfigError
from flywheel_trainer.policy.tiny import build_tiny_model

from policy_rows import rollout_rows

TRAINER_DIR = Path(__file__).resolve().parents[1]
SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("group_id", pa.string()),
        ("task_id", pa.string()),
        ("attempt_id", pa.string()),
        ("policy_checkpoint", pa.string()),
        ("policy_version", pa.string()),
        ("input_ids", pa.list_(pa.int32())),
        ("loss_mask", pa.list_(pa.int32())),
        ("behaviour_logprobs", pa.list_(pa.float32())),
        ("reward", pa.float64()),
        ("has_token_ids", pa.bool_()),
        ("span_starts", pa.list_(pa.int32())),
        ("span_ends", pa.list_(pa.int32())),
        ("span_decision_ids", pa.list_(pa.string())),
        ("span_hints", pa.list_(pa.string())),
        ("span_verified", pa.list_(pa.bool_())),
    ]
)


def write_dataset(blobs: Path, dataset_id: str = "ds-1", rows=None) -> str:
    rows = rows if rows is not None else rollout_rows(*build_tiny_model(seed=0), n=6)
    root = blobs / "training" / "datasets" / dataset_id
    root.mkdir(parents=True, exist_ok=True)
    halves = [rows[: len(rows) // 2], rows[len(rows) // 2 :]]
    shards = []
    for n, part in enumerate(halves):
        table = pa.table(
            {
                "sample_id": [r.sample_id for r in part],
                "group_id": [r.group_id for r in part],
                "task_id": [r.task_id for r in part],
                "attempt_id": [r.attempt_id for r in part],
                "policy_checkpoint": ["tiny:0"] * len(part),
                "policy_version": [""] * len(part),
                "input_ids": [r.input_ids for r in part],
                "loss_mask": [r.loss_mask for r in part],
                "behaviour_logprobs": [r.behaviour_logprobs for r in part],
                "reward": [r.reward for r in part],
                "has_token_ids": [r.has_token_ids for r in part],
                "span_starts": [[s.start for s in r.spans] for r in part],
                "span_ends": [[s.end for s in r.spans] for r in part],
                "span_decision_ids": [[s.decision_id for s in r.spans] for r in part],
                "span_hints": [[s.hint for s in r.spans] for r in part],
                "span_verified": [[s.verified for s in r.spans] for r in part],
            },
            schema=SCHEMA,
        )
        key = f"training/datasets/{dataset_id}/shard-{n:05d}.parquet"
        pq.write_table(table, blobs / key)
        shards.append({"key": key, "rows": len(part), "tokens": sum(len(r.input_ids) for r in part)})
    manifest = {
        "datasetId": dataset_id,
        "createdAt": "2026-12-03T00:00:00.000Z",
        "format": "flywheel.training-shards/1",
        "shards": shards,
        "rows": len(rows),
        "tokens": sum(s["tokens"] for s in shards),
        "tokenRows": len(rows),
        "textOnlyRows": 0,
        "decisionSpans": sum(len(r.spans) for r in rows),
        "rewardSpecs": {},
        "decisions": [s.decision_id for r in rows for s in r.spans],
        "sources": [],
        "excluded": [],
    }
    key = f"training/datasets/{dataset_id}/manifest.json"
    (blobs / key).write_text(json.dumps(manifest))
    return key


def job_env(data_dir: Path, dataset_key: str, run: str, config: dict) -> dict[str, str]:
    return {
        "FLYWHEEL_DATA_DIR": str(data_dir),
        "FLYWHEEL_TRAIN_RUN_ID": run,
        "FLYWHEEL_DATASET_KEY": dataset_key,
        "FLYWHEEL_BASE_MODEL": "tiny:0",
        "FLYWHEEL_TRAIN_CONFIG": json.dumps(config),
        "FLYWHEEL_OUTPUT_KEY": f"training/runs/{run}/checkpoint",
        "FLYWHEEL_METRICS_KEY": f"training/runs/{run}/metrics.jsonl",
        "FLYWHEEL_STATE_KEY": f"training/runs/{run}/state",
    }


def test_shards_read_back_as_written(tmp_path):
    rows = rollout_rows(*build_tiny_model(seed=0), n=4)
    key = write_dataset(tmp_path, rows=rows)
    read = read_shard(tmp_path / key.replace("manifest.json", "shard-00000.parquet"))
    assert [r.input_ids for r in read] == [r.input_ids for r in rows[:2]]
    assert read[0].spans == rows[0].spans and read[1].spans == []
    batch = collate(read, pad_id=256)
    assert batch.span_mask.sum() == sum(s.end - s.start for r in read for s in r.spans)
    bad = pa.table({"sample_id": ["x"], "group_id": ["g"], "input_ids": [[1, 2]], "loss_mask": [[0]], "behaviour_logprobs": [[0.0, 0.0]], "reward": [0.0], "has_token_ids": [True]})
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(ShardDataError, match="differ in length"):
        read_shard(tmp_path / "bad.parquet")


def test_policy_job_end_to_end_in_a_process(tmp_path):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    env = {**os.environ, **job_env(tmp_path, key, "r1", {"steps": 3, "batchSize": 2, "learningRate": 0.003, "saveEvery": 2, "teacherChoiceWeight": 0.5})}
    env.pop("FLYWHEEL_BUCKET", None)
    done = subprocess.run([sys.executable, "-m", "flywheel_trainer", "policy-job"], cwd=TRAINER_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["message"] == "trained"
    lines = [json.loads(l) for l in (blobs / "training/runs/r1/metrics.jsonl").read_text().splitlines()]
    assert [l["step"] for l in lines] == [1, 2, 3]
    assert all({"at", "loss", "tokens", "stepSeconds", "outcome", "decision", "teacherChoice", "mismatch"} <= set(l) for l in lines)
    folder = blobs / "training/runs/r1/checkpoint"
    meta = json.loads((folder / "flywheel.json").read_text())
    assert meta["steps"] == 3 and meta["base"] == "tiny:0" and meta["datasetId"] == "ds-1" and meta["runId"] == "r1"
    assert AutoModelForCausalLM.from_pretrained(folder).config.num_hidden_layers == 2
    assert PreTrainedTokenizerFast.from_pretrained(folder).chat_template
    assert (blobs / "training/runs/r1/state/state.pt").is_file()


def _sha(blobs: Path, run: str) -> str:
    return json.loads((blobs / f"training/runs/{run}/checkpoint/flywheel.json").read_text())["sha256"]


def test_policy_job_resumes_from_its_state_to_the_same_weights(tmp_path, monkeypatch, capsys):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    config = {"steps": 4, "batchSize": 2, "learningRate": 0.003, "saveEvery": 2}
    for name, value in job_env(tmp_path, key, "straight", config).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    assert main(["policy-job"]) == 0
    # Stopped after 2 steps (its state saved), then the same run again to 4: it resumes at step 3.
    for name, value in job_env(tmp_path, key, "resumed", {**config, "steps": 2}).items():
        monkeypatch.setenv(name, value)
    assert main(["policy-job"]) == 0
    monkeypatch.setenv("FLYWHEEL_TRAIN_CONFIG", json.dumps(config))
    assert main(["policy-job"]) == 0
    meta = json.loads((blobs / "training/runs/resumed/checkpoint/flywheel.json").read_text())
    assert meta["resumedFrom"] == 2 and meta["steps"] == 4
    assert _sha(blobs, "resumed") == _sha(blobs, "straight")
    steps = [json.loads(l)["step"] for l in (blobs / "training/runs/resumed/metrics.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4]


def test_policy_job_bad_input_exits_2(tmp_path, monkeypatch, capsys):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    for name, value in job_env(tmp_path, key, "bad", {"steps": 1}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    monkeypatch.setenv("FLYWHEEL_TRAIN_CONFIG", '{"stepz": 1}')
    assert main(["policy-job"]) == EXIT_BAD_INPUT
    assert "config.stepz" in capsys.readouterr().err
    monkeypatch.setenv("FLYWHEEL_TRAIN_CONFIG", '{"steps": 1}')
    monkeypatch.setenv("FLYWHEEL_DATASET_KEY", "training/datasets/none/manifest.json")
    assert main(["policy-job"]) == EXIT_BAD_INPUT
    monkeypatch.setenv("FLYWHEEL_DATASET_KEY", key)
    monkeypatch.setenv("FLYWHEEL_BASE_MODEL", "gpt:5")
    assert main(["policy-job"]) == EXIT_BAD_INPUT
    assert "FLYWHEEL_BASE_MODEL" in capsys.readouterr().err


def test_train_policy_on_local_files_from_a_trained_checkpoint(tmp_path):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    out = tmp_path / "ckpt"
    assert main(["train-policy", "--manifest", str(blobs / key), "--base", "tiny:0", "--out", str(out), "--config", '{"steps": 1, "batchSize": 2}', "--metrics", str(tmp_path / "m.jsonl")]) == 0
    assert (out / "model.safetensors").is_file() and len((tmp_path / "m.jsonl").read_text().splitlines()) == 1
    # The trained checkpoint is a base again (hf:<folder>).
    again = tmp_path / "ckpt2"
    assert main(["train-policy", "--manifest", str(blobs / key), "--base", f"hf:{out}", "--out", str(again), "--config", '{"steps": 1, "batchSize": 2}']) == 0
    assert json.loads((again / "flywheel.json").read_text())["base"] == f"hf:{out}"


def test_policy_job_trains_from_a_checkpoint_in_blobs(tmp_path, monkeypatch, capsys):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    for name, value in job_env(tmp_path, key, "first", {"steps": 1, "batchSize": 2}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    assert main(["policy-job"]) == 0
    first = json.loads((blobs / "training/runs/first/checkpoint/flywheel.json").read_text())
    for name, value in job_env(tmp_path, key, "second", {"steps": 1, "batchSize": 2}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FLYWHEEL_BASE_MODEL", "blob:training/runs/first/checkpoint")
    assert main(["policy-job"]) == 0
    second = json.loads((blobs / "training/runs/second/checkpoint/flywheel.json").read_text())
    assert second["base"] == "blob:training/runs/first/checkpoint" and second["baseSha256"] == first["sha256"]
    assert second["sha256"] != first["sha256"]
    monkeypatch.setenv("FLYWHEEL_BASE_MODEL", "blob:models/none")
    assert main(["policy-job"]) == EXIT_BAD_INPUT
    assert "no checkpoint files" in capsys.readouterr().err


def _one_row(**overrides):
    """One valid row's columns (prompt 0-1 masked, model tokens 2-5, a span on 3-4), with ``overrides``."""
    row = {
        "sample_id": ["s#1"], "group_id": ["g"], "input_ids": [[10, 11, 12, 13, 14, 15]], "loss_mask": [[0, 0, 1, 1, 1, 1]],
        "behaviour_logprobs": [[0.0, 0.0, -0.5, -1.0, -0.1, -2.0]], "reward": [1.0], "has_token_ids": [True],
        "span_starts": [[3]], "span_ends": [[5]], "span_decision_ids": [["d1"]], "span_hints": [["tools: read"]], "span_verified": [[False]],
    }
    row.update(overrides)
    return row


HOSTILE = [
    ({"behaviour_logprobs": [[0.0, 0.0, float("nan"), -1.0, -0.1, -2.0]]}, r"behaviour_logprobs\[2\]: expected a finite"),
    ({"behaviour_logprobs": [[0.0, 0.0, -0.5, float("-inf"), -0.1, -2.0]]}, r"behaviour_logprobs\[3\]"),
    ({"behaviour_logprobs": [[0.0, 0.0, 0.3, -1.0, -0.1, -2.0]]}, r"behaviour_logprobs\[2\]: expected a finite log-prob ≤ 0"),
    ({"behaviour_logprobs": [[None, 0.0, None, -1.0, -0.1, -2.0]]}, r"behaviour_logprobs\[2\]: null on a model token"),
    ({"reward": [float("inf")]}, "reward: expected a finite number"),
    ({"reward": [None]}, "reward"),
    ({"input_ids": [[10, None, 12, 13, 14, 15]]}, r"input_ids\[1\]: expected an integer"),
    ({"input_ids": [["a", "b", "c", "d", "e", "f"]]}, r"input_ids\[0\]: expected an integer"),
    ({"input_ids": [None]}, "input_ids: null"),
    ({"span_hints": [[None]]}, r"span_hints\[0\]: expected a string"),
    ({"span_starts": [[2, 3]], "span_ends": [[4, 5]], "span_decision_ids": [["d1", "d2"]], "span_hints": [["a", "b"]], "span_verified": [[False, False]]}, "overlap"),
    ({"span_starts": [[1]], "span_ends": [[3]]}, "loss_mask 0"),
    ({"input_ids": [[]], "loss_mask": [[]], "behaviour_logprobs": [[]], "span_starts": [[]], "span_ends": [[]], "span_decision_ids": [[]], "span_hints": [[]], "span_verified": [[]]}, "empty on a row with has_token_ids"),
]


@pytest.mark.parametrize("overrides, message", HOSTILE)
def test_hostile_shards_are_bad_input_naming_row_and_column(tmp_path, overrides, message):
    pq.write_table(pa.table(_one_row(**overrides)), tmp_path / "bad.parquet")
    with pytest.raises(ShardDataError, match=message) as caught:
        read_shard(tmp_path / "bad.parquet", "shard-0")
    assert "shard-0: row 0 (s#1)" in str(caught.value)


def test_a_builder_text_only_row_is_read_and_its_dataset_trains(tmp_path, monkeypatch):
    # The builder's hosted-API row: has_token_ids false, empty token columns, no spans (trajectory-rows.ts).
    empty = {"input_ids": [[]], "loss_mask": [[]], "behaviour_logprobs": [[]], "has_token_ids": [False], "span_starts": [[]], "span_ends": [[]], "span_decision_ids": [[]], "span_hints": [[]], "span_verified": [[]]}
    pq.write_table(pa.table(_one_row(**empty)), tmp_path / "text.parquet")
    (row,) = read_shard(tmp_path / "text.parquet")
    assert row.input_ids == [] and not row.has_token_ids and row.spans == [] and row.reward == 1.0
    from flywheel_trainer.policy.shards import Row

    rows = rollout_rows(*build_tiny_model(seed=0), n=4) + [Row(**{**row.__dict__, "group_id": "g0"})]
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs, rows=rows)
    for name, value in job_env(tmp_path, key, "text", {"steps": 2, "batchSize": 2}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    assert main(["policy-job"]) == 0
    meta = json.loads((blobs / "training/runs/text/checkpoint/flywheel.json").read_text())
    assert meta["steps"] == 2 and meta["rows"] == 5


def test_span_masks_are_anded_with_the_loss_mask():
    from flywheel_trainer.policy.shards import Row, Span

    row = Row(sample_id="s", group_id="g", input_ids=[1, 2, 3, 4], loss_mask=[0, 1, 0, 1], behaviour_logprobs=[0.0] * 4, reward=0.0, has_token_ids=True, spans=[Span(1, 4, "d", "h", verified=True)])
    batch = collate([row], pad_id=0)
    assert batch.span_mask.tolist() == [[0, 1, 0, 1]] and batch.verified_span_mask.tolist() == [[0, 1, 0, 1]]


def test_resources_the_machine_lacks_are_bad_input(tmp_path, monkeypatch, capsys):
    with pytest.raises(TrainerConfigError, match="config.nodes: 2 nodes need an AWS Batch multi-node parallel job"):
        check_resources(TrainerConfig(nodes=2), {})
    check_resources(TrainerConfig(nodes=2), {"AWS_BATCH_JOB_NUM_NODES": "2", "AWS_BATCH_JOB_NODE_INDEX": "1"}, device_count=1)
    with pytest.raises(TrainerConfigError, match="config.gpus: 4 GPUs asked, this machine has 2"):
        check_resources(TrainerConfig(gpus=4), {}, device_count=2)
    check_resources(TrainerConfig(gpus=4), {}, device_count=0)  # CPU: one process, whatever gpus says
    # Through the job: exit 2 at once (torchrun would wait for the other node forever).
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    for name, value in job_env(tmp_path, key, "mnp", {"steps": 1, "nodes": 2}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    monkeypatch.delenv("AWS_BATCH_JOB_NUM_NODES", raising=False)
    assert main(["policy-job"]) == EXIT_BAD_INPUT
    assert "AWS_BATCH_JOB_NUM_NODES" in capsys.readouterr().err


def test_a_non_finite_loss_fails_the_job_with_exit_2(tmp_path, monkeypatch, capsys):
    # A huge learning rate makes the weights (and the next loss) blow up: the job stops without stepping on a NaN.
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    for name, value in job_env(tmp_path, key, "nan", {"steps": 4, "batchSize": 2, "learningRate": 1e30}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    code = main(["policy-job"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and "not finite" in err, err
