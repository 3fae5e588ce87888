"""A training dataset: its manifest (``DatasetManifestSchema``, lib/training/schemas.ts) and Parquet shards whose
columns are ``SHARD_COLUMNS``, read with pyarrow into rows and padded tensors.

    >>> manifest, rows = read_dataset(Path("manifest.json"), lambda key: Path("blobs") / key)
    >>> batch = collate(rows[:8], pad_id=tokenizer.pad_token_id)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import torch

from ..reward_model import TrainingDataError

SHARD_FORMAT = "flywheel.training-shards/1"
# SHARD_COLUMNS of lib/training/schemas.ts (the names the builder writes).
COLUMNS = {
    "sampleId": "sample_id",
    "groupId": "group_id",
    "taskId": "task_id",
    "attemptId": "attempt_id",
    "policyCheckpoint": "policy_checkpoint",
    "policyVersion": "policy_version",
    "inputIds": "input_ids",
    "lossMask": "loss_mask",
    "behaviourLogprobs": "behaviour_logprobs",
    "reward": "reward",
    "hasTokenIds": "has_token_ids",
    "spanStarts": "span_starts",
    "spanEnds": "span_ends",
    "spanDecisionIds": "span_decision_ids",
    "spanHints": "span_hints",
    "spanVerified": "span_verified",
}
REQUIRED = ("sample_id", "group_id", "input_ids", "loss_mask", "behaviour_logprobs", "reward", "has_token_ids")


class ShardDataError(TrainingDataError):
    """A manifest or shard the trainer cannot train on (bad input: the job exits 2)."""


@dataclass(frozen=True)
class Span:
    """A decision's tokens ``[start, end)`` in ``input_ids``, with the teacher's hint."""

    start: int
    end: int
    decision_id: str
    hint: str
    verified: bool = False


@dataclass
class Row:
    sample_id: str
    group_id: str
    input_ids: list[int]
    loss_mask: list[int]
    behaviour_logprobs: list[float]
    reward: float
    has_token_ids: bool
    spans: list[Span] = field(default_factory=list)
    task_id: str = ""
    attempt_id: str = ""


@dataclass
class Batch:
    """Padded tensors of rows ([B, T]); ``pg_mask`` is ``loss_mask`` of the rows with token ids only."""

    rows: list[Row]
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor
    pg_mask: torch.Tensor
    behaviour_logprobs: torch.Tensor
    rewards: torch.Tensor
    has_token_ids: torch.Tensor
    span_mask: torch.Tensor
    verified_span_mask: torch.Tensor

    @property
    def group_ids(self) -> list[str]:
        return [r.group_id for r in self.rows]


def _list(value: Any) -> list:
    return list(value) if value is not None else []


def parse_manifest(text: str, where: str = "manifest") -> dict[str, Any]:
    """The manifest's JSON, checked for what the trainer reads (``format``, ``shards[].key``)."""
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as error:
        raise ShardDataError(f"{where}: not JSON: {error}") from error
    if not isinstance(manifest, dict):
        raise ShardDataError(f"{where}: not a JSON object")
    if manifest.get("format") != SHARD_FORMAT:
        raise ShardDataError(f"{where}: format: expected {SHARD_FORMAT!r}, got {manifest.get('format')!r}")
    shards = manifest.get("shards")
    if not isinstance(shards, list) or not all(isinstance(s, dict) and isinstance(s.get("key"), str) for s in shards):
        raise ShardDataError(f"{where}: shards: expected a list of {{key, rows, tokens}}")
    return manifest


def read_shard(path: str | Path, where: str | None = None) -> list[Row]:
    """The rows of one Parquet shard, checked (lengths agree, spans inside the row)."""
    where = where or str(path)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        if isinstance(error, FileNotFoundError):
            raise ShardDataError(f"{where}: no such shard") from error
        raise ShardDataError(f"{where}: not a Parquet file: {error}") from error
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise ShardDataError(f"{where}: missing columns {', '.join(missing)}")
    data = table.to_pydict()
    n = table.num_rows
    col = lambda name, default=None: data.get(name, [default] * n)  # noqa: E731
    rows = []
    for i in range(n):
        ids = _list(data["input_ids"][i])
        mask = _list(data["loss_mask"][i])
        beh = _list(data["behaviour_logprobs"][i])
        sample = str(data["sample_id"][i])
        if not ids:
            raise ShardDataError(f"{where}: row {sample}: input_ids: empty")
        if len(mask) != len(ids) or len(beh) != len(ids):
            raise ShardDataError(f"{where}: row {sample}: input_ids, loss_mask and behaviour_logprobs differ in length ({len(ids)}, {len(mask)}, {len(beh)})")
        starts, ends = _list(col("span_starts")[i]), _list(col("span_ends")[i])
        dids, hints, verified = _list(col("span_decision_ids")[i]), _list(col("span_hints")[i]), _list(col("span_verified")[i])
        if not (len(starts) == len(ends) == len(hints)):
            raise ShardDataError(f"{where}: row {sample}: span_starts, span_ends and span_hints differ in length")
        spans = []
        for k, (s, e) in enumerate(zip(starts, ends)):
            if not 0 < s < e <= len(ids):
                raise ShardDataError(f"{where}: row {sample}: span_starts/span_ends: span ({s}, {e}) outside 1..{len(ids)}")
            spans.append(Span(int(s), int(e), str(dids[k]) if k < len(dids) else "", str(hints[k]), bool(verified[k]) if k < len(verified) else False))
        reward = data["reward"][i]
        rows.append(
            Row(
                sample_id=sample,
                group_id=str(data["group_id"][i]),
                input_ids=[int(x) for x in ids],
                loss_mask=[1 if x else 0 for x in mask],
                behaviour_logprobs=[float(x) if x is not None else 0.0 for x in beh],
                reward=float(reward) if reward is not None else 0.0,
                has_token_ids=bool(data["has_token_ids"][i]),
                spans=spans,
                task_id=str(col("task_id", "")[i] or ""),
                attempt_id=str(col("attempt_id", "")[i] or ""),
            )
        )
    return rows


def read_dataset(manifest_path: str | Path, fetch: Callable[[str], Path]) -> tuple[dict[str, Any], list[Row]]:
    """Reads a manifest file and its shards; ``fetch(key)`` returns a local path of the shard blob ``key``.

    @example manifest, rows = read_dataset(tmp / "manifest.json", lambda key: blobs.fetch(key))
    """
    path = Path(manifest_path)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError) as error:
        raise ShardDataError(f"{path}: unreadable manifest: {error}") from error
    manifest = parse_manifest(text, str(path))
    rows: list[Row] = []
    for shard in manifest["shards"]:
        rows.extend(read_shard(fetch(shard["key"]), shard["key"]))
    if not rows:
        raise ShardDataError(f"{path}: the dataset has no rows")
    return manifest, rows


def collate(rows: Sequence[Row], pad_id: int) -> Batch:
    """Right-padded tensors of ``rows``. Rows without token ids get a zero ``pg_mask``: the outcome term never sees
    them (their ids were not the sampler's)."""
    width = max(len(r.input_ids) for r in rows)
    b = len(rows)
    ids = torch.full((b, width), pad_id, dtype=torch.long)
    attention = torch.zeros((b, width), dtype=torch.long)
    mask = torch.zeros((b, width))
    beh = torch.zeros((b, width))
    spans = torch.zeros((b, width))
    verified = torch.zeros((b, width))
    for i, r in enumerate(rows):
        n = len(r.input_ids)
        ids[i, :n] = torch.tensor(r.input_ids, dtype=torch.long)
        attention[i, :n] = 1
        mask[i, :n] = torch.tensor(r.loss_mask, dtype=torch.float32)
        beh[i, :n] = torch.tensor(r.behaviour_logprobs, dtype=torch.float32)
        for s in r.spans:
            spans[i, s.start : s.end] = 1
            if s.verified:
                verified[i, s.start : s.end] = 1
    has_ids = torch.tensor([r.has_token_ids for r in rows], dtype=torch.bool)
    return Batch(
        rows=list(rows),
        input_ids=ids,
        attention_mask=attention,
        loss_mask=mask,
        pg_mask=mask * has_ids.unsqueeze(-1).float(),
        behaviour_logprobs=beh,
        rewards=torch.tensor([r.reward for r in rows], dtype=torch.float32),
        has_token_ids=has_ids,
        span_mask=spans,
        verified_span_mask=verified,
    )
