"""OpenAI chat messages to a prompt, and Hermes-style tool calls back out of generated text.

The prompt is the checkpoint's own ``chat_template`` (``tokenizer_config.json``; the tiny model's is in ``tiny.py``)
with ``tools`` passed to it, as vLLM renders it. Tool calls in generated text are parsed like vLLM's ``hermes``
parser (``--tool-call-parser hermes``): every ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` becomes an
OpenAI ``tool_calls`` entry and the text before the first one the content; if any of them is not such JSON, nothing is
parsed and the whole text stays content (the harness then sees an answer without a call, as it would from vLLM).

    >>> parse_tool_calls('ok <tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call>')[1][0]["function"]
    {'name': 'ls', 'arguments': '{"path": "."}'}
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)$", re.DOTALL)
"""vLLM's hermes pattern: closed calls, and a last call the generation ended inside (a length cut still counts)."""


def content_text(content: Any) -> str:
    """A message's ``content`` as text: a string, ``None``, or a list of ``{"type": "text", "text": …}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text")


def normalise_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages the chat template reads: text content, and tool-call arguments as JSON objects where they parse.

    Arguments arrive as a JSON string (OpenAI's wire form); a template that writes ``arguments | tojson`` then renders
    the object the model produced, not a quoted string of it.
    """
    out = []
    for message in messages:
        # OpenAI's `developer` is the system role of newer clients; the template knows `system`.
        role = "system" if message["role"] == "developer" else message["role"]
        m: dict[str, Any] = {"role": role, "content": content_text(message.get("content"))}
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                fn = call.get("function", {})
                arguments = fn.get("arguments", {})
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments) if arguments.strip() else {}
                    except json.JSONDecodeError:
                        pass  # left as the model wrote it
                calls.append({"id": call.get("id"), "type": "function", "function": {"name": fn.get("name", ""), "arguments": arguments}})
            m["tool_calls"] = calls
        if message.get("tool_call_id") is not None:
            m["tool_call_id"] = message["tool_call_id"]
        if message.get("name") is not None:
            m["name"] = message["name"]
        out.append(m)
    return out


def render_prompt(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The prompt text for ``messages`` (and ``tools``), ending with the assistant's generation prompt."""
    kwargs: dict[str, Any] = {"tools": tools} if tools else {}
    return tokenizer.apply_chat_template(normalise_messages(messages), add_generation_prompt=True, tokenize=False, **kwargs)


def parse_tool_calls(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """``(content, tool_calls)`` from generated text; ``(text, [])`` when it holds no well-formed call.

    A call is well formed when its body is a JSON object with a string ``name`` and an object ``arguments`` (a JSON
    string of an object is accepted too); ``arguments`` goes out as a JSON string, as OpenAI sends it.
    """
    matches = list(TOOL_CALL_RE.finditer(text))
    if not matches:
        return text, []
    calls = []
    for match in matches:
        body = (match.group(1) if match.group(1) is not None else match.group(2)).strip()
        try:
            parsed = json.loads(body)
        except json.JSONDecodeError:
            return text, []
        if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str) or not parsed["name"]:
            return text, []
        arguments = parsed.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return text, []
        if not isinstance(arguments, dict):
            return text, []
        calls.append({"id": f"chatcmpl-tool-{uuid.uuid4().hex}", "type": "function", "function": {"name": parsed["name"], "arguments": json.dumps(arguments, ensure_ascii=False)}})
    before = text[: matches[0].start()].strip()
    return (before or None), calls
