"""The policy job (``python -m flywheel_trainer policy-job``) and its local twin (``train-policy``).

Environment (``TRAINER_JOB_ENV``, lib/training/schemas.ts): ``FLYWHEEL_DATASET_KEY`` (the manifest blob),
``FLYWHEEL_BASE_MODEL`` (``tiny:<seed>[:<shape>]`` built in code; ``blob:<prefix>`` a checkpoint folder under that
blob prefix — on AWS the S3 staging path, copied into the job's scratch before training; ``hf:<path>`` a Hugging Face
model folder already on this machine's file system — baked into the image or on the EFS mount the job definition
attaches, staged there from S3 beforehand: nothing is downloaded from a model hub at run time), ``FLYWHEEL_TRAIN_CONFIG`` (TrainerConfig JSON), ``FLYWHEEL_OUTPUT_KEY`` (the
checkpoint folder's prefix), ``FLYWHEEL_METRICS_KEY`` (metrics JSON Lines, rewritten whole after every step: its
freshness is the heartbeat), ``FLYWHEEL_STATE_KEY`` (prefix of the resumable state; a state found there is resumed),
``FLYWHEEL_TRAIN_RUN_ID``, ``FLYWHEEL_CODE_VERSION`` (both optional, into the checkpoint's metadata). Blobs as in
``flywheel_trainer.__main__.Blobs``. With ``gpus × nodes > 1`` the job relaunches itself under torchrun.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..reward_model import TrainingDataError
from .checkpoint import METADATA_FILE, WEIGHTS_FILE, load_checkpoint, save_checkpoint
from .shards import ShardDataError, parse_manifest, read_shard
from .tiny import SHAPES, build_tiny_model
from .train import STATE_FILE, PolicyTrainer, TrainerConfig, TrainerConfigError, held_out_split, with_lora


class BaseModelError(TrainingDataError):
    """``FLYWHEEL_BASE_MODEL`` names no model the job can stage (bad input: exit 2)."""


def _blobs(env: dict[str, str]):
    # Imported here: __main__ imports this module lazily, and the Blobs class lives there.
    from ..__main__ import Blobs

    return Blobs(env)


def stage_base(base: str, blobs, work: Path) -> tuple[Callable[[], tuple[torch.nn.Module, Any]], dict[str, Any]]:
    """A builder of the base (model, tokenizer) and its description, from ``tiny:<seed>[:<shape>]``, ``blob:<prefix>``
    or ``hf:<path>``. Nothing is downloaded from a model hub.

    @example build, info = stage_base("tiny:0", blobs, Path(tmp)); model, tok = build()
    """
    kind, _, rest = base.partition(":")
    if kind == "tiny":
        seed_text, _, shape = rest.partition(":")
        if not seed_text.isdigit() or (shape and shape not in SHAPES):
            raise BaseModelError(f"FLYWHEEL_BASE_MODEL: expected tiny:<seed>[:{'|'.join(SHAPES)}], got {base!r}")
        return (lambda: build_tiny_model(int(seed_text), shape or "tiny")), {"base": base}
    if kind == "blob":
        keys = blobs.keys(rest)
        if not keys:
            raise BaseModelError(f"FLYWHEEL_BASE_MODEL: no checkpoint files under blob prefix {rest!r}")
        folder = work / "base"
        for key in keys:
            dest = folder / key[len(rest.rstrip("/")) + 1 :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            blobs.get(key, dest)
    elif kind == "hf":
        folder = Path(rest)
    else:
        raise BaseModelError(f"FLYWHEEL_BASE_MODEL: expected tiny:<seed>, blob:<prefix> or hf:<path>, got {base!r}")
    if not (folder / "config.json").is_file():
        raise BaseModelError(f"FLYWHEEL_BASE_MODEL: {base!r} has no config.json")

    def build():
        model, tok, _ = load_checkpoint(folder)
        return model, tok

    meta_path = folder / METADATA_FILE
    parent = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    return build, {"base": base, "baseSha256": parent.get("sha256")}


def _env_config(env: dict[str, str]) -> TrainerConfig:
    raw = env.get("FLYWHEEL_TRAIN_CONFIG", "{}") or "{}"
    try:
        return TrainerConfig.from_json(json.loads(raw))
    except json.JSONDecodeError as error:
        raise TrainingDataError(f"FLYWHEEL_TRAIN_CONFIG: not JSON: {error}") from error


def run_policy_job(env: dict[str, str]) -> dict[str, Any]:
    """Runs the job in this process (one rank of torchrun, or alone); returns the checkpoint's metadata (rank 0).

    @example run_policy_job({**os.environ, "FLYWHEEL_BASE_MODEL": "tiny:0", "FLYWHEEL_DATASET_KEY": "training/datasets/d1/manifest.json", ...})
    """
    from .distributed import barrier, init_from_env, shard_model, shutdown

    dataset_key = env["FLYWHEEL_DATASET_KEY"]
    output_key = env["FLYWHEEL_OUTPUT_KEY"].rstrip("/")
    metrics_key = env.get("FLYWHEEL_METRICS_KEY")
    state_key = env.get("FLYWHEEL_STATE_KEY", "").rstrip("/")
    config = _env_config(env)
    blobs = _blobs(env)
    world, device = init_from_env()
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            build, base_info = stage_base(env["FLYWHEEL_BASE_MODEL"], blobs, work)
            manifest_path = work / "manifest.json"
            blobs.get(dataset_key, manifest_path)
            try:
                manifest = parse_manifest(manifest_path.read_text(encoding="utf-8"), dataset_key)
            except UnicodeDecodeError as error:
                raise ShardDataError(f"{dataset_key}: not UTF-8") from error
            rows = []
            for n, shard in enumerate(manifest["shards"]):
                local = work / f"shard-{n:05d}.parquet"
                blobs.get(shard["key"], local)
                rows.extend(read_shard(local, shard["key"]))
            if not rows:
                raise ShardDataError(f"{dataset_key}: the dataset has no rows")
            train_rows, held_out = held_out_split(rows)
            model, tokenizer = build()
            wrap = (lambda m: shard_model(m, device)) if world.distributed else None
            trainer = PolicyTrainer(model, tokenizer, train_rows, config, held_out=held_out, world=world, device=device, wrap=wrap)

            lines: list[dict[str, Any]] = []
            state_blob = f"{state_key}/{STATE_FILE}" if state_key else None
            resumed_from = None
            if state_blob and blobs.exists(state_blob):
                blobs.get(state_blob, work / STATE_FILE)
                trainer.load_state(work / STATE_FILE)
                resumed_from = trainer.step_count
                # Keep the metrics of the steps the state covers; later lines are redone.
                if metrics_key and blobs.exists(metrics_key):
                    blobs.get(metrics_key, work / "old-metrics.jsonl")
                    for line in (work / "old-metrics.jsonl").read_text(encoding="utf-8").splitlines():
                        try:
                            parsed = json.loads(line)
                        except json.JSONDecodeError:
                            continue
                        if isinstance(parsed, dict) and isinstance(parsed.get("step"), int) and parsed["step"] <= resumed_from:
                            lines.append(parsed)

            def on_step(metrics: dict[str, Any]) -> None:
                if world.rank != 0 or not metrics_key:
                    return
                lines.append(metrics)
                path = work / "metrics.jsonl"
                path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
                blobs.put(metrics_key, path)
                # A few bytes beside the metrics (trainingRunKeys(runId).heartbeat): the stall check reads this first.
                beat = work / "heartbeat.json"
                beat.write_text(json.dumps({"step": metrics.get("step"), "at": metrics.get("at")}), encoding="utf-8")
                blobs.put(metrics_key.rsplit("/", 1)[0] + "/heartbeat.json" if "/" in metrics_key else "heartbeat.json", beat)
                print(json.dumps({"message": "step", **{k: metrics[k] for k in ("step", "loss", "tokens", "stepSeconds")}}), flush=True)

            def on_save(t: PolicyTrainer) -> None:
                if not state_blob:
                    return
                t.save_state(work / STATE_FILE)  # collective under FSDP; rank 0 writes
                if world.rank == 0:
                    blobs.put(state_blob, work / STATE_FILE)

            summary = trainer.run(on_step=on_step, on_save=on_save)
            on_save(trainer)  # the finished state: a retry after a failed upload below trains no step again

            metadata = {
                **base_info,
                "runId": env.get("FLYWHEEL_TRAIN_RUN_ID"),
                "datasetKey": dataset_key,
                "datasetId": manifest.get("datasetId"),
                "decisions": manifest.get("decisions", []),
                "rewardSpecs": manifest.get("rewardSpecs", {}),
                "codeVersion": env.get("FLYWHEEL_CODE_VERSION"),
                "config": config.to_json(),
                "steps": trainer.step_count,
                "resumedFrom": resumed_from,
                "rows": len(train_rows),
                "heldOutRows": len(held_out),
                "worldSize": world.size,
                "rejectedProbBefore": summary["rejectedProbBefore"],
                "rejectedProbAfter": summary["rejectedProbAfter"],
                "lastLoss": summary["last"].get("loss") if summary["last"] else None,
            }
            if world.distributed:
                from .distributed import full_model_state

                state = full_model_state(trainer.model)
                if world.rank == 0:
                    plain, _ = build()
                    if config.lora:
                        plain = with_lora(plain, config)
                    plain.load_state_dict(state)
                    final_model = plain
            else:
                final_model = trainer.model
            written: dict[str, Any] = {}
            if world.rank == 0:
                out = work / "checkpoint"
                written = save_checkpoint(final_model.to("cpu"), tokenizer, out, metadata)
                # Weights first, metadata last: a reader that finds flywheel.json finds the weights it names.
                names = sorted(p.name for p in out.iterdir() if p.is_file() and not p.name.startswith("."))
                order = [WEIGHTS_FILE] + [n for n in names if n not in (WEIGHTS_FILE, METADATA_FILE)] + [METADATA_FILE]
                for name in order:
                    blobs.put(f"{output_key}/{name}", out / name)
            barrier(world)
            return written
    finally:
        shutdown(world)


MNP_VARIABLES = ("AWS_BATCH_JOB_NUM_NODES", "AWS_BATCH_JOB_NODE_INDEX")
"""What AWS Batch sets in each node of a multi-node parallel job (the main node's address too, on the others)."""


def check_resources(config: TrainerConfig, env: dict[str, str], device_count: int | None = None) -> None:
    """Raises ``TrainerConfigError`` (exit 2) for a config this machine cannot run: ``nodes > 1`` outside an AWS Batch
    multi-node parallel job (torchrun would wait for nodes that never come), or more ``gpus`` than it has.

    @example check_resources(TrainerConfig(gpus=8), os.environ)   # on a 4-GPU machine: TrainerConfigError
    """
    if config.nodes > 1:
        missing = [name for name in MNP_VARIABLES if not env.get(name)]
        if missing:
            raise TrainerConfigError(f"config.nodes: {config.nodes} nodes need an AWS Batch multi-node parallel job, and {', '.join(missing)} is not set (run with nodes 1 here)")
    count = torch.cuda.device_count() if device_count is None else device_count
    if count and config.gpus > count:
        raise TrainerConfigError(f"config.gpus: {config.gpus} GPUs asked, this machine has {count}")


def launch(env: dict[str, str]) -> int | None:
    """Relaunches the job under torchrun when the config asks for more than one process and this is not a rank
    already; returns torchrun's exit code, or None to run here."""
    from .distributed import torchrun_command, under_torchrun

    if under_torchrun(env):
        return None
    config = _env_config(env)
    check_resources(config, env)
    procs = max(config.gpus, 1) if torch.cuda.is_available() else 1
    nodes = int(env.get("AWS_BATCH_JOB_NUM_NODES", config.nodes))
    if procs * nodes <= 1:
        return None
    return subprocess.run(torchrun_command(procs, env, nodes=nodes), env=env).returncode


def run_local(manifest: str, base: str, out: str, config_json: str | None = None, metrics: str | None = None, run_id: str | None = None) -> dict[str, Any]:
    """Trains from a local manifest (shards beside it, found by file name) into the folder ``out``.

    @example run_local("ds/manifest.json", "tiny:0", "out/checkpoint", '{"steps": 5}', metrics="out/metrics.jsonl")
    """
    manifest_path = Path(manifest)
    try:
        parsed = parse_manifest(manifest_path.read_text(encoding="utf-8"), str(manifest_path))
    except (FileNotFoundError, UnicodeDecodeError) as error:
        raise ShardDataError(f"{manifest_path}: unreadable manifest: {error}") from error
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "blobs"
        (root / "in").mkdir(parents=True)
        shutil.copyfile(manifest_path, root / "in" / "manifest.json")
        shards = []
        for n, shard in enumerate(parsed["shards"]):
            src = manifest_path.parent / Path(shard["key"]).name
            if not src.is_file():
                raise ShardDataError(f"{manifest_path}: shard {shard['key']} not found beside the manifest ({src})")
            shutil.copyfile(src, root / "in" / f"shard-{n:05d}.parquet")
            shards.append({**shard, "key": f"in/shard-{n:05d}.parquet"})
        (root / "in" / "manifest.json").write_text(json.dumps({**parsed, "shards": shards}), encoding="utf-8")
        env = {
            **os.environ,
            "FLYWHEEL_DATA_DIR": tmp,
            "FLYWHEEL_DATASET_KEY": "in/manifest.json",
            "FLYWHEEL_BASE_MODEL": base,
            "FLYWHEEL_TRAIN_CONFIG": config_json or "{}",
            "FLYWHEEL_OUTPUT_KEY": "out/checkpoint",
            "FLYWHEEL_METRICS_KEY": "out/metrics.jsonl",
            "FLYWHEEL_STATE_KEY": "out/state",
        }
        env.pop("FLYWHEEL_BUCKET", None)
        if run_id:
            env["FLYWHEEL_TRAIN_RUN_ID"] = run_id
        code = launch(env)
        if code is not None:
            if code != 0:
                raise RuntimeError(f"torchrun exited {code}")
            written = json.loads((root / "out" / "checkpoint" / METADATA_FILE).read_text(encoding="utf-8"))
        else:
            written = run_policy_job(env)
            if os.environ.get("RANK", "0") != "0":
                return written  # a torchrun rank other than 0: rank 0 wrote the files
        Path(out).mkdir(parents=True, exist_ok=True)
        for f in (root / "out" / "checkpoint").iterdir():
            shutil.copyfile(f, Path(out) / f.name)
        if metrics:
            shutil.copyfile(root / "out" / "metrics.jsonl", metrics)
        return written
