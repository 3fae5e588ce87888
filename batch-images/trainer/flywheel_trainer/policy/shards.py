"""A training dataset: its manifest (``DatasetManifestSchema``, lib/training/schemas.ts) and Parquet shards whose
columns are ``SHARD_COLUMNS``, read with pyarrow into rows and padded tensors.

    >>> manifest, rows = read_dataset(Path("manifest.json"), lambda key: Path("blobs") / key)
    >>> batch = collate(rows[:8], pad_id=tokenizer.pad_token_id)
"""

from __future__ import annotations

import json
import math
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


LOGPROB_TOLERANCE = 1e-4
"""A behaviour log-prob above this is not a log-prob (samplers round a little: 0 < lp ≤ 1e-4 passes)."""


def _int_list(value: Any, where: str, column: str) -> list[int]:
    """A list column's value as ints; a null list or a null/non-int element is bad input naming the column."""
    if value is None:
        raise ShardDataError(f"{where}: {column}: null")
    out = []
    for k, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, int):
            raise ShardDataError(f"{where}: {column}[{k}]: expected an integer, got {x!r}")
        else:
            out.append(x)
    return out


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
    """The rows of one Parquet shard, checked: lengths agree; ids are integers; behaviour log-probs finite and ≤ 0 (no
    null on a model token); rewards finite; spans inside the row, on model tokens only, not overlapping, with a hint.
    A text-only row (``has_token_ids`` false) may have empty token columns and no spans (the TypeScript builder's
    form): it only counts in its group's mean reward. Anything else raises ``ShardDataError`` naming row and column.

    @example rows = read_shard(Path("shard-00000.parquet"), "training/datasets/d1/shard-00000.parquet")
    """
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
    n = table.num_rows

    # Column by column (no whole-table dict of every column, unknown ones included).
    def col(name: str) -> list:
        return table.column(name).to_pylist() if name in table.column_names else [None] * n

    sample_ids, group_ids, task_ids, attempt_ids = col("sample_id"), col("group_id"), col("task_id"), col("attempt_id")
    input_ids, loss_masks, behaviours = col("input_ids"), col("loss_mask"), col("behaviour_logprobs")
    rewards, has_ids = col("reward"), col("has_token_ids")
    starts_c, ends_c, dids_c, hints_c, verified_c = col("span_starts"), col("span_ends"), col("span_decision_ids"), col("span_hints"), col("span_verified")
    rows = []
    for i in range(n):
        sample = str(sample_ids[i])
        at = f"{where}: row {i} ({sample})"
        if sample_ids[i] is None or group_ids[i] is None:
            raise ShardDataError(f"{at}: {'sample_id' if sample_ids[i] is None else 'group_id'}: null")
        if not isinstance(has_ids[i], bool):
            raise ShardDataError(f"{at}: has_token_ids: expected a boolean, got {has_ids[i]!r}")
        reward = rewards[i]
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
            raise ShardDataError(f"{at}: reward: expected a finite number, got {reward!r}")
        ids = _int_list(input_ids[i], at, "input_ids")
        mask = _int_list(loss_masks[i], at, "loss_mask")
        beh = behaviours[i]
        if beh is None:
            raise ShardDataError(f"{at}: behaviour_logprobs: null")
        if not ids and has_ids[i]:
            raise ShardDataError(f"{at}: input_ids: empty on a row with has_token_ids")
        if len(mask) != len(ids) or len(beh) != len(ids):
            raise ShardDataError(f"{at}: input_ids, loss_mask and behaviour_logprobs differ in length ({len(ids)}, {len(mask)}, {len(beh)})")
        if any(x not in (0, 1) for x in mask):
            raise ShardDataError(f"{at}: loss_mask: expected 0 or 1")
        logprobs = []
        for t, (x, m) in enumerate(zip(beh, mask)):
            if x is None:
                if m:
                    raise ShardDataError(f"{at}: behaviour_logprobs[{t}]: null on a model token (loss_mask 1)")
                x = 0.0
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x > LOGPROB_TOLERANCE:
                raise ShardDataError(f"{at}: behaviour_logprobs[{t}]: expected a finite log-prob ≤ 0, got {x!r}")
            logprobs.append(min(float(x), 0.0))
        starts, ends = _int_list(starts_c[i] or [], at, "span_starts"), _int_list(ends_c[i] or [], at, "span_ends")
        dids, hints, verified = list(dids_c[i] or []), list(hints_c[i] or []), list(verified_c[i] or [])
        if not (len(starts) == len(ends) == len(hints)):
            raise ShardDataError(f"{at}: span_starts, span_ends and span_hints differ in length")
        spans = []
        for k, (s, e) in enumerate(zip(starts, ends)):
            if not 0 < s < e <= len(ids):
                raise ShardDataError(f"{at}: span_starts/span_ends: span ({s}, {e}) outside 1..{len(ids)}")
            if not isinstance(hints[k], str):
                raise ShardDataError(f"{at}: span_hints[{k}]: expected a string, got {hints[k]!r}")
            if not all(mask[s:e]):
                # A span scores the model's own tokens: one over a prompt or tool output is a builder bug.
                raise ShardDataError(f"{at}: span_starts/span_ends: span ({s}, {e}) covers positions with loss_mask 0")
            spans.append(Span(s, e, str(dids[k]) if k < len(dids) and dids[k] is not None else "", hints[k], bool(verified[k]) if k < len(verified) else False))
        ordered = sorted(spans, key=lambda sp: sp.start)
        for a, b in zip(ordered, ordered[1:]):
            if b.start < a.end:
                raise ShardDataError(f"{at}: span_starts/span_ends: spans ({a.start}, {a.end}) and ({b.start}, {b.end}) overlap")
        rows.append(
            Row(
                sample_id=sample,
                group_id=str(group_ids[i]),
                input_ids=ids,
                loss_mask=mask,
                behaviour_logprobs=logprobs,
                reward=float(reward),
                has_token_ids=has_ids[i],
                spans=spans,
                task_id=str(task_ids[i] or ""),
                attempt_id=str(attempt_ids[i] or ""),
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
    """Right-padded tensors of ``rows`` (rows with token ids, or text-only rows re-tokenised; not empty ones). Rows without token ids get a zero ``pg_mask``: the outcome term never sees
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
    # Spans score model tokens only (read_shard rejects others; rows built in code are masked here too).
    spans *= mask
    verified *= mask
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
