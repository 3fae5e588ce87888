"""The trajectory contract: JSON Lines written by the TypeScript harness validate, line by line, against the one JSON
Schema generated from its zod schemas (docs/schemas/trajectory.schema.json, `npm run schemas`).

`FLYWHEEL_TRAJECTORY_JSONL` (paths joined by os.pathsep) adds trajectories to validate: the TypeScript contract test
(test/training/trajectory-schema-contract.test.ts) runs a real harness attempt, writes its JSON Lines and runs this file
with them. Run alone it validates a trajectory shaped as the harness writes one, and that broken lines are refused.
"""

import copy
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[3]
SCHEMA_PATH = REPO / "docs" / "schemas" / "trajectory.schema.json"

HARNESS_LINES = [
    {"type": "header", "format": "flywheel.trajectory", "schemaVersion": 1, "attemptId": "run-1.calc__add.strict.0", "taskId": "calc/add",
     "suite": "calc", "mode": "strict", "agent": {"name": "flywheel-harness", "version": "1"}, "model": {"id": "m"},
     "policy": {"checkpoint": "ckpt-1", "weightVersion": "w3"}, "sampling": {}, "limits": {"turns": 8},
     "tools": [{"name": "bash", "description": "run a command", "parameters": {"type": "object"}}], "startedAt": "2026-12-03T00:00:00.000Z"},
    {"type": "message", "seq": 1, "at": "2026-12-03T00:00:00.001Z", "messageId": "a:s0", "role": "system", "content": "you fix bugs"},
    {"type": "assistant", "seq": 2, "at": "2026-12-03T00:00:01.000Z", "messageId": "a:m1", "turn": 1, "content": "",
     "toolCalls": [{"id": "c1", "name": "nope", "arguments": "{}"}], "finishReason": "tool_calls", "model": "m", "sampling": {},
     "usage": {"promptTokens": 2, "completionTokens": 1}, "tokens": {"promptTokenIds": [1, 2], "completionTokenIds": [3], "logprobs": [-0.3]},
     "timing": {"startedAt": "2026-12-03T00:00:00.500Z", "durationMs": 500, "httpAttempts": 1}},
    {"type": "event", "seq": 3, "at": "2026-12-03T00:00:01.001Z", "kind": "tool.unknown", "messageId": "a:m1",
     "span": {"toolCallId": "c1", "field": "arguments", "start": 0, "end": 2}, "message": "no tool nope", "detail": {}},
    {"type": "tool_result", "seq": 4, "at": "2026-12-03T00:00:01.002Z", "messageId": "a:m1", "toolCallId": "c1", "name": "nope",
     "isError": True, "content": "unknown tool", "truncated": False, "exitCode": None, "durationMs": 0},
    {"type": "outcome", "seq": 5, "at": "2026-12-03T00:00:02.000Z", "stopReason": {"kind": "submitted", "answer": "done"}, "limitsHit": [],
     "turns": 1, "usage": {"promptTokens": 2, "completionTokens": 1, "cachedTokens": 0}, "outputBytes": 12, "durationMs": 2000},
]


def validator():
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def branch_for(schema, line_type):
    """The object schema of one line type (the union's branch whose `type` is that constant), or None."""
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, []):
            if sub.get("properties", {}).get("type", {}).get("const") == line_type:
                return sub
            found = branch_for(sub, line_type)
            if found is not None:
                return found
    return None


def line_errors(v, lines):
    """Every error, as `line N: path: message` (1-based lines, as a person reads the file). A line of a known type is
    checked against its own branch too, so the error names the field instead of "not valid under any of the schemas"."""
    out = []
    for n, line in enumerate(lines, start=1):
        errors = list(v.iter_errors(line))
        branch = branch_for(v.schema, line.get("type")) if errors and isinstance(line, dict) else None
        if branch is not None:
            errors = list(Draft202012Validator(branch).iter_errors(line)) or errors
        for e in errors:
            out.append(f"line {n}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
    return out


def read_jsonl(path):
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


def test_the_schema_is_a_valid_draft_2020_12_schema():
    assert validator().schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_trajectory_as_the_harness_writes_it_validates():
    assert line_errors(validator(), HARNESS_LINES) == []


def test_trajectories_written_by_the_typescript_harness_validate():
    paths = [p for p in os.environ.get("FLYWHEEL_TRAJECTORY_JSONL", "").split(os.pathsep) if p]
    v = validator()
    checked = 0
    for p in paths:
        lines = read_jsonl(p)
        assert lines[0]["type"] == "header" and lines[-1]["type"] == "outcome", p
        assert line_errors(v, lines) == [], p
        checked += len(lines)
    assert checked == sum(len(read_jsonl(p)) for p in paths)


@pytest.mark.parametrize(
    "index, change",
    [
        (2, lambda l: l.__setitem__("turn", "one")),
        (2, lambda l: l["tokens"].__setitem__("completionTokenIds", [3.5])),
        (2, lambda l: l.pop("messageId")),
        (0, lambda l: l.__setitem__("schemaVersion", 2)),
        (5, lambda l: l.__setitem__("stopReason", {"kind": "gave-up"})),
        (4, lambda l: l.__setitem__("type", "tool-result")),
    ],
    ids=["turn-not-int", "token-id-not-int", "no-message-id", "schema-version-2", "unknown-stop-reason", "unknown-line-type"],
)
def test_a_broken_line_is_refused_and_only_that_line(index, change):
    lines = copy.deepcopy(HARNESS_LINES)
    change(lines[index])
    errors = line_errors(validator(), lines)
    assert errors, f"line {index + 1} should be refused"
    assert all(e.startswith(f"line {index + 1}:") for e in errors)
