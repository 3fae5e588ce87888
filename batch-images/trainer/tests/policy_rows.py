"""Rows for the policy tests: rollouts of the tiny model with exact ids, behaviour log-probs and decision spans."""

from __future__ import annotations

import torch

from flywheel_trainer.policy.losses import token_logprobs
from flywheel_trainer.policy.shards import Row, Span


def rollout_rows(model, tok, n: int = 8, groups: int = 2, spans: bool = True) -> list[Row]:
    """``n`` rows: prompt (masked) + assistant tool call (model tokens) + tool output (masked) + assistant answer.
    Even rows call the missing tool ``grep`` (a span on its name, with a hint); odd rows call ``read``."""
    rows = []
    for i in range(n):
        tool = "grep" if i % 2 == 0 else "read"
        prompt = tok.encode(f"<|user|>task {i % groups}: find the bug<|end|><|assistant|>")
        call_head = tok.encode('<tool_call>{"name": "')
        name = tok.encode(tool)
        call_tail = tok.encode('"}</tool_call><|end|>')
        tool_out = tok.encode("<|tool|>ok<|end|><|assistant|>")
        answer = tok.encode(f"done {i}<|end|>")
        ids = prompt + call_head + name + call_tail + tool_out + answer
        mask = [0] * len(prompt) + [1] * (len(call_head) + len(name) + len(call_tail)) + [0] * len(tool_out) + [1] * len(answer)
        with torch.no_grad():
            t = torch.tensor([ids])
            beh = (token_logprobs(model(t).logits, t)[0] * torch.tensor(mask)).tolist()
        start = len(prompt) + len(call_head)
        row_spans = [Span(start, start + len(name), f"dec-{i:020x}", "The tools that exist: read, write.", verified=i % 4 == 0)] if spans and tool == "grep" else []
        rows.append(Row(sample_id=f"att-{i}#1", group_id=f"g{i % groups}", input_ids=ids, loss_mask=mask, behaviour_logprobs=beh, reward=1.0 if tool == "read" else -1.0, has_token_ids=True, spans=row_spans, task_id=f"t{i % groups}", attempt_id=f"att-{i}"))
    return rows
