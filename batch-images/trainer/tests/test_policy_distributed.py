"""FSDP2 under torchrun: two CPU ranks (gloo) train the tiny model through the policy job, rank 0 writes the
checkpoint (and its state, which a second launch resumes from: the job test covers resuming)."""

import json
import math
import os
import subprocess
import sys

from transformers import AutoModelForCausalLM

from flywheel_trainer.__main__ import main
from flywheel_trainer.policy.distributed import torchrun_command

from test_policy_job import TRAINER_DIR, job_env, write_dataset


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_torchrun_two_ranks_fsdp2_trains_and_rank_0_saves(tmp_path, monkeypatch):
    blobs = tmp_path / "blobs"
    key = write_dataset(blobs)
    env = {**os.environ, **job_env(tmp_path, key, "dist", {"steps": 2, "batchSize": 4, "learningRate": 0.003, "saveEvery": 1}), "OMP_NUM_THREADS": "1"}
    env.pop("FLYWHEEL_BUCKET", None)
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1", "--master_port", str(_free_port()), "-m", "flywheel_trainer", "policy-job"]
    done = subprocess.run(command, cwd=TRAINER_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [json.loads(l) for l in (blobs / "training/runs/dist/metrics.jsonl").read_text().splitlines()]
    assert [l["step"] for l in lines] == [1, 2]
    # The metrics are all-reduced: the whole batch's rows, not rank 0's half.
    assert all(l["worldSize"] == 2 and l["rows"] == 4 for l in lines)
    assert all(isinstance(l["loss"], float) and abs(l["loss"]) < 1e6 for l in lines)
    # The same job in one process takes the same batches: step 1's loss and metrics match (each term normalised by the
    # whole batch's token count, not a rank's), and so does step 2's (FSDP's mean of the ranks' gradients is the
    # single-process gradient, term weights included).
    for name, value in job_env(tmp_path, key, "single", {"steps": 2, "batchSize": 4, "learningRate": 0.003, "saveEvery": 1}).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FLYWHEEL_BUCKET", raising=False)
    assert main(["policy-job"]) == 0
    single = [json.loads(l) for l in (blobs / "training/runs/single/metrics.jsonl").read_text().splitlines()]
    for multi, one in zip(lines, single):
        for name in ("loss", "outcome", "decision", "teacherChoice", "mismatch", "offPolicyGap", "spanKl", "rejectedProb"):
            assert math.isclose(multi[name], one[name], rel_tol=1e-4, abs_tol=1e-6), (multi["step"], name, multi[name], one[name])
        for name in ("tokens", "modelTokens", "pgTokens", "rows", "spans"):
            assert multi[name] == one[name], name
    folder = blobs / "training/runs/dist/checkpoint"
    meta = json.loads((folder / "flywheel.json").read_text())
    assert meta["worldSize"] == 2 and meta["steps"] == 2
    assert AutoModelForCausalLM.from_pretrained(folder).num_parameters() > 0
    assert (blobs / "training/runs/dist/state/state.pt").is_file()


def test_torchrun_command_reads_aws_batch_multi_node_variables():
    main = torchrun_command(8, {"AWS_BATCH_JOB_NUM_NODES": "2", "AWS_BATCH_JOB_NODE_INDEX": "0"}, nodes=2)
    child = torchrun_command(8, {"AWS_BATCH_JOB_NUM_NODES": "2", "AWS_BATCH_JOB_NODE_INDEX": "1", "AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS": "10.0.0.5"}, nodes=2)
    arg = lambda cmd, name: cmd[cmd.index(name) + 1]  # noqa: E731
    assert (arg(child, "--nnodes"), arg(child, "--node_rank"), arg(child, "--nproc_per_node"), arg(child, "--master_addr")) == ("2", "1", "8", "10.0.0.5")
    assert arg(main, "--node_rank") == "0" and arg(main, "--master_addr") != ""
    assert child[-3:] == ["-m", "flywheel_trainer", "policy-job"] or child[-2:] == ["flywheel_trainer", "policy-job"]
    single = torchrun_command(2, {})
    assert (arg(single, "--nnodes"), arg(single, "--master_addr")) == ("1", "127.0.0.1")
