"""Entry points of the training image.

    python -m flywheel_trainer train --data teacher.jsonl --out model/ [--kind pointwise|pairwise] [--seed 0]
    python -m flywheel_trainer score --model model/ --input items.jsonl      # JSON Lines out, one per item
    python -m flywheel_trainer job                                           # the Batch job (environment below)
    python -m flywheel_trainer policy-job                                    # the policy trainer's Batch job (policy/job.py)
    python -m flywheel_trainer train-policy --manifest ds/manifest.json --base tiny:0 --out ckpt/ [--config JSON] [--metrics m.jsonl]
    python -m flywheel_trainer serve --model ckpt/ --port 8000 [--served-model-name X]  # OpenAI-compatible, like vLLM
    python -m flywheel_trainer demo-textual-feedback [--seeds 3] [--max-steps 60]   # decision term vs outcome term, a table

The job reads ``FLYWHEEL_TRAIN_DATA_KEY`` (a JSON Lines blob of the teacher's verdicts) and writes
``<FLYWHEEL_MODEL_KEY>/model.safetensors`` and ``<FLYWHEEL_MODEL_KEY>/metadata.json``; ``FLYWHEEL_REWARD_KIND``
(default pointwise), ``FLYWHEEL_SEED`` (default 0), ``FLYWHEEL_EPOCHS`` (default 300). Blobs are files under
``$FLYWHEEL_DATA_DIR/blobs`` (the local jobs driver sets it) or objects of the S3 bucket ``$FLYWHEEL_BUCKET``.

Exit codes: 0 trained; ``EXIT_BAD_INPUT`` (2) for data it cannot train on (missing, not UTF-8, not JSON Lines, no
targets: the Batch job definition fails it at once, no retry helps); ``EXIT_RETRYABLE`` (1) for any other error of the
environment (network, disk full, S3 unavailable: Batch runs the job once more).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from .reward_model import METADATA_FILE, WEIGHTS_FILE, TrainConfig, TrainingDataError, load, prefer_a, save, score_texts, train


EXIT_BAD_INPUT = 2
"""Data the trainer cannot train on: the job definition's ``badInputExitCode`` (``TRAINER_BAD_INPUT_EXIT_CODE``)."""
EXIT_RETRYABLE = 1
"""An error of the environment (network, disk, S3), not of the data: Batch's attempts run the job again."""

# Errors of a path the caller named: bad input, not the environment.
_MISSING_PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    out = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except _MISSING_PATH_ERRORS as error:
        raise TrainingDataError(f"{path}: no such file: {error}") from error
    except UnicodeDecodeError as error:
        raise TrainingDataError(f"{path}: not UTF-8: {error}") from error
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise TrainingDataError(f"{path}:{n}: not JSON: {error}") from error
    return out


class Blobs:
    """The blobs the job reads and writes: local files (``FLYWHEEL_DATA_DIR``) or S3 (``FLYWHEEL_BUCKET``)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.root = Path(env["FLYWHEEL_DATA_DIR"]) / "blobs" if env.get("FLYWHEEL_DATA_DIR") else None
        self.bucket = env.get("FLYWHEEL_BUCKET")
        if self.root is None and not self.bucket:
            raise TrainingDataError("set FLYWHEEL_DATA_DIR (local) or FLYWHEEL_BUCKET (S3)")
        self._s3 = None
        if self.root is None:
            import boto3  # only in the image, for S3

            self._s3 = boto3.client("s3")

    def get(self, key: str, dest: Path) -> None:
        """Copies blob ``key`` to ``dest``; a blob that does not exist is bad input (``TrainingDataError``)."""
        if self.root is not None:
            try:
                data = (self.root / key).read_bytes()
            except _MISSING_PATH_ERRORS as error:
                raise TrainingDataError(f"no blob {key}") from error
            dest.write_bytes(data)
        else:
            from botocore.exceptions import ClientError  # only in the image, for S3

            try:
                self._s3.download_file(self.bucket, key, str(dest))
            except ClientError as error:
                if str(error.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey"):
                    raise TrainingDataError(f"no blob s3://{self.bucket}/{key}") from error
                raise

    def exists(self, key: str) -> bool:
        if self.root is not None:
            return (self.root / key).is_file()
        from botocore.exceptions import ClientError  # only in the image, for S3

        try:
            self._s3.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError as error:
            if str(error.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    def keys(self, prefix: str) -> list[str]:
        """The keys under ``prefix/`` (a checkpoint folder's files), sorted."""
        prefix = prefix.rstrip("/") + "/"
        if self.root is not None:
            folder = self.root / prefix
            return sorted(str(p.relative_to(self.root)) for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")) if folder.is_dir() else []
        keys = []
        for page in self._s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            keys.extend(obj["Key"] for obj in page.get("Contents", []))
        return sorted(keys)

    def put(self, key: str, src: Path) -> None:
        if self.root is not None:
            target = self.root / key
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            tmp.write_bytes(src.read_bytes())
            tmp.replace(target)
        else:
            self._s3.upload_file(str(src), self.bucket, key)


def run_job(env: dict[str, str]) -> dict[str, Any]:
    data_key = env["FLYWHEEL_TRAIN_DATA_KEY"]
    model_key = env["FLYWHEEL_MODEL_KEY"].rstrip("/")
    config = TrainConfig(kind=env.get("FLYWHEEL_REWARD_KIND", "pointwise"), seed=int(env.get("FLYWHEEL_SEED", "0")), epochs=int(env.get("FLYWHEEL_EPOCHS", "300")))
    blobs = Blobs(env)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "teacher.jsonl"
        blobs.get(data_key, data)
        trained = train(read_jsonl(data), config)
        out = Path(tmp) / "model"
        metadata = save(trained, out, {"trainingData": data_key})
        # Weights first: a reader that finds the metadata finds the weights it names.
        blobs.put(f"{model_key}/{WEIGHTS_FILE}", out / WEIGHTS_FILE)
        blobs.put(f"{model_key}/{METADATA_FILE}", out / METADATA_FILE)
    return metadata


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["serve"]:
        # The checkpoint server (policy/serve.py) has its own options; transformers loads only for it.
        from .policy.serve import main as serve_main

        return serve_main(given[1:])
    if given[:1] == ["demo-textual-feedback"]:
        # Item 6's measurement (policy/demo_textual_feedback.py): its own options, a table on stdout.
        from .policy.demo_textual_feedback import main as demo_main

        return demo_main(given[1:])
    parser = argparse.ArgumentParser(prog="flywheel_trainer")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--kind", default="pointwise", choices=["pointwise", "pairwise"])
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--epochs", type=int, default=300)
    s = sub.add_parser("score")
    s.add_argument("--model", required=True)
    s.add_argument("--input", required=True)
    sub.add_parser("job")
    # The policy trainer (flywheel_trainer/policy): the Batch job over TRAINER_JOB_ENV, and the same on local files.
    sub.add_parser("policy-job")
    tp = sub.add_parser("train-policy")
    tp.add_argument("--manifest", required=True, help="a dataset manifest.json with its Parquet shards beside it")
    tp.add_argument("--base", default="tiny:0", help="tiny:<seed>[:<shape>] or hf:<folder>")
    tp.add_argument("--out", required=True, help="the checkpoint folder to write")
    tp.add_argument("--config", default=None, help="TrainerConfig JSON (camelCase)")
    tp.add_argument("--metrics", default=None, help="where to copy metrics.jsonl")
    tp.add_argument("--run-id", default=None)
    args = parser.parse_args(argv)
    try:
        if args.command == "train":
            metadata = save(train(read_jsonl(args.data), TrainConfig(kind=args.kind, seed=args.seed, epochs=args.epochs)), args.out)
            print(json.dumps({"loss": metadata["loss"], "sha256": metadata["sha256"]}))
        elif args.command == "score":
            net, metadata = load(args.model)
            items = read_jsonl(args.input)
            if metadata["kind"] == "pairwise" and items and "a" in items[0]:
                probs = prefer_a(net, metadata, [(str(i["a"]), str(i["b"])) for i in items])
                for item, p in zip(items, probs):
                    print(json.dumps({"id": item.get("id"), "preferA": p}))
            else:
                for item, scores in zip(items, score_texts(net, metadata, [str(i.get("text", "")) for i in items])):
                    print(json.dumps({"id": item.get("id"), "scores": scores}))
        elif args.command == "policy-job":
            from .policy.job import launch, run_policy_job

            code = launch(dict(os.environ))
            if code is not None:
                return code
            written = run_policy_job(dict(os.environ))
            if written:
                print(json.dumps({"message": "trained", "steps": written["steps"], "sha256": written["sha256"], "lastLoss": written["lastLoss"]}))
        elif args.command == "train-policy":
            from .policy.job import run_local

            written = run_local(args.manifest, args.base, args.out, args.config, args.metrics, args.run_id)
            if written:
                print(json.dumps({"message": "trained", "steps": written["steps"], "sha256": written["sha256"], "lastLoss": written["lastLoss"], "out": args.out}))
        else:
            metadata = run_job(dict(os.environ))
            print(json.dumps({"message": "trained", "loss": metadata["loss"], "examples": metadata["examples"], "sha256": metadata["sha256"]}))
    except (TrainingDataError, KeyError, ValueError) as error:
        # KeyError: a required variable unset; ValueError: FLYWHEEL_SEED / FLYWHEEL_EPOCHS not integers.
        print(json.dumps({"level": "ERROR", "message": str(error), "retryable": False}), file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        # Disk full, a network or S3 error: not the data's fault, so not the bad-input code (Batch retries it).
        print(json.dumps({"level": "ERROR", "message": f"{type(error).__name__}: {error}", "retryable": True}), file=sys.stderr)
        return EXIT_RETRYABLE
    return 0


if __name__ == "__main__":
    sys.exit(main())
