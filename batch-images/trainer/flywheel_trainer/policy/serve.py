"""An OpenAI-compatible server for a trained checkpoint that answers like vLLM: token ids and log-probs included.

    python3 -m flywheel_trainer serve --model out/checkpoint --port 8000 [--served-model-name ckpt-7] [--host 127.0.0.1]

The local stand-in for ``vllm serve`` (the rollout job starts it beside the harness when no real vLLM is configured,
``batch-images/rollout/vllm-sidecar.ts``), so the loop turns on one machine with the tiny model on CPU. It answers

- ``GET /v1/models`` → ``{"object": "list", "data": [{"id": <served name>, …}]}``; ``GET /health`` → 200;
- ``POST /v1/chat/completions``: ``messages`` (system, user, assistant with ``tool_calls``, tool), ``tools``,
  ``tool_choice``, ``temperature``, ``top_p``, ``top_k``, ``max_tokens`` / ``max_completion_tokens``, ``seed``,
  ``stop``, ``stop_token_ids``, ``logprobs`` / ``top_logprobs``, and vLLM's ``return_token_ids`` /
  ``return_tokens_as_token_ids``, in the shape ``lib/models/openai-compatible.ts`` parses: top-level
  ``prompt_token_ids``, ``choices[0].token_ids`` (every sampled id, the end-of-turn token included, as vLLM),
  ``choices[0].logprobs.content[{token, logprob, top_logprobs}]``, ``usage``, ``finish_reason`` (stop |
  length | tool_calls). Tool calls are parsed from ``<tool_call>{json}</tool_call>`` (``chat_format.py``).

A bad request gets 400 with ``{"error": {"message", "type": "BadRequestError", "param": <field>, "code": 400}}`` (a
prompt plus ``max_tokens`` past the context, too); an unknown ``model`` 404. One model, one request at a time (a lock:
the CPU is the bottleneck, and a seeded request then gives the same tokens whatever else is running).

@example
    server = PolicyServer.load("out/checkpoint", served_model_name="ckpt-7")
    httpd = make_http_server(server, "127.0.0.1", 0); httpd.serve_forever()
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema
import torch

from .chat_format import parse_tool_calls, render_prompt
from .checkpoint import load_checkpoint

MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_TOKENS_CAP = 1024
"""The completion length of a request without ``max_tokens`` (``--max-tokens-cap``): the rest of the context would let
one request hold the model's lock for minutes on a CPU."""
SOCKET_TIMEOUT_S = 60.0
"""A client that stops sending (or reading) mid-request frees its handler thread after this long."""
SAMPLING_EPS = 1e-5
"""A temperature under this is greedy (vLLM's rule): dividing logits by it would overflow."""

_STRING_OR_NULL = {"type": ["string", "null"]}
_TEXT_PARTS = {"type": "array", "items": {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}, "text": {"type": "string"}}}}

REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["role"],
                "properties": {
                    "role": {"enum": ["system", "developer", "user", "assistant", "tool"]},
                    "content": {"anyOf": [_STRING_OR_NULL, _TEXT_PARTS]},
                    "name": {"type": "string"},
                    "tool_call_id": {"type": "string"},
                    "tool_calls": {
                        "type": ["array", "null"],
                        "items": {
                            "type": "object",
                            "required": ["function"],
                            "properties": {
                                "id": {"type": "string"},
                                "type": {"const": "function"},
                                "function": {
                                    "type": "object",
                                    "required": ["name"],
                                    "properties": {"name": {"type": "string", "minLength": 1}, "arguments": {"type": ["string", "object"]}},
                                },
                            },
                        },
                    },
                },
            },
        },
        "tools": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["type", "function"],
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string", "minLength": 1}, "description": {"type": "string"}, "parameters": {"type": "object"}},
                    },
                },
            },
        },
        "tool_choice": {"anyOf": [{"enum": ["none", "auto", "required"]}, {"type": "object"}, {"type": "null"}]},
        "temperature": {"type": ["number", "null"], "minimum": 0},
        "top_p": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
        "top_k": {"type": ["integer", "null"], "minimum": -1},
        "max_tokens": {"type": ["integer", "null"], "minimum": 1},
        "max_completion_tokens": {"type": ["integer", "null"], "minimum": 1},
        "seed": {"type": ["integer", "null"], "minimum": -(2**63), "maximum": 2**64 - 1},
        "stop": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string", "minLength": 1}}, {"type": "null"}]},
        "stop_token_ids": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0}},
        "logprobs": {"type": ["boolean", "null"]},
        "top_logprobs": {"type": ["integer", "null"], "minimum": 0, "maximum": 20},
        "return_token_ids": {"type": ["boolean", "null"]},
        "return_tokens_as_token_ids": {"type": ["boolean", "null"]},
        "n": {"anyOf": [{"const": 1}, {"type": "null"}]},
        "stream": {"anyOf": [{"const": False}, {"type": "null"}]},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(REQUEST_SCHEMA)


class RequestError(Exception):
    """A request the server refuses: ``status`` (400, 404), and ``param``, the field at fault."""

    def __init__(self, message: str, param: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.param = param
        self.status = status

    def body(self) -> dict[str, Any]:
        kind = "NotFoundError" if self.status == 404 else "BadRequestError"
        return {"error": {"message": str(self), "type": kind, "param": self.param, "code": self.status}}


def _field_path(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validate_request(body: Any) -> None:
    """Raises ``RequestError`` naming the first field that breaks ``REQUEST_SCHEMA``."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object", None)
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(body))
    if error is None:
        return
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = next((name for name in error.validator_value if name not in error.instance), None)
        if missing is not None:
            path.append(missing)
    param = _field_path(path) or None
    if param == "stream":
        raise RequestError("stream: streaming is not supported by this server; send stream: false", "stream")
    if param == "n":
        raise RequestError("n: only one choice per request (n = 1) is supported", "n")
    raise RequestError(f"{param or 'body'}: {error.message}", param)


def _sample(logits: torch.Tensor, temperature: float, top_p: float, top_k: int, generator: torch.Generator) -> int:
    """One token id from ``logits`` under temperature, top-k and top-p (temperature ~0: the most likely token)."""
    if temperature < SAMPLING_EPS:
        return int(torch.argmax(logits).item())
    scaled = logits / temperature
    if 0 < top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    if top_p < 1.0:
        sorted_logits, order = torch.sort(scaled, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        # Drop a token when the ones before it already cover top_p; the first always stays.
        drop = (torch.cumsum(probs, dim=-1) - probs) >= top_p
        scaled = scaled.clone()
        scaled[order[drop]] = float("-inf")
    probs = torch.softmax(scaled, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator).item())


class PolicyServer:
    """One loaded checkpoint and the chat-completions logic (no HTTP: ``make_http_server`` adds it)."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, served_model_name: str, max_model_len: int | None = None, max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = served_model_name
        config_len = getattr(model.config, "max_position_embeddings", None) or 2048
        self.max_model_len = min(max_model_len or config_len, config_len)
        self.max_tokens_cap = max_tokens_cap
        ends: set[int] = set()
        generation_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        for ids in (generation_eos, getattr(model.config, "eos_token_id", None), tokenizer.eos_token_id):
            if isinstance(ids, int):
                ends.add(ids)
            elif isinstance(ids, (list, tuple)):
                ends.update(int(i) for i in ids)
        self.end_ids = ends
        self.lock = threading.Lock()
        self.created = int(time.time())

    @classmethod
    def load(cls, directory: str, served_model_name: str | None = None, max_model_len: int | None = None, max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP) -> "PolicyServer":
        """Loads an HF checkpoint folder (``checkpoint.load_checkpoint``); the name defaults to the folder, as vLLM's."""
        model, tokenizer, _ = load_checkpoint(directory)
        return cls(model, tokenizer, served_model_name or directory, max_model_len, max_tokens_cap)

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.name, "object": "model", "created": self.created, "owned_by": "flywheel", "max_model_len": self.max_model_len}]}

    def chat(self, body: Any) -> dict[str, Any]:
        """The response to one chat-completions request body; raises ``RequestError`` for a bad one."""
        validate_request(body)
        if body.get("model") is not None and body["model"] != self.name:
            raise RequestError(f"model: the model `{body['model']}` does not exist (this server serves `{self.name}`)", "model", 404)
        tools = body.get("tools") or None
        try:
            prompt = render_prompt(self.tokenizer, body["messages"], tools)
        except Exception as error:  # a template that cannot render these messages: the request's fault
            raise RequestError(f"messages: the chat template cannot render them: {error}", "messages") from error
        prompt_ids = self.tokenizer.encode(prompt, add_special_tokens=False)
        room = self.max_model_len - len(prompt_ids)
        max_field = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
        max_tokens = body.get(max_field)
        if room <= 0 or (max_tokens is not None and max_tokens > room):
            asked = len(prompt_ids) + (max_tokens or 0)
            raise RequestError(
                f"This model's maximum context length is {self.max_model_len} tokens. However, you requested {asked} tokens "
                f"({len(prompt_ids)} in the messages, {max_tokens or 0} in the completion). Please reduce the length of the messages or completion.",
                max_field if max_tokens is not None and room > 0 else "messages",
            )
        stops = body.get("stop") or []
        if isinstance(stops, str):
            stops = [stops]
        seed = body.get("seed")
        generator = torch.Generator().manual_seed(seed if seed is not None else secrets.randbits(63))
        with self.lock:
            generated, logprobs, tops, finish, text = self._generate(
                prompt_ids,
                max_new=max_tokens or min(room, self.max_tokens_cap),
                temperature=1.0 if body.get("temperature") is None else float(body["temperature"]),
                top_p=1.0 if body.get("top_p") is None else float(body["top_p"]),
                top_k=body.get("top_k") or -1,
                stops=stops,
                end_ids=self.end_ids | set(body.get("stop_token_ids") or []),
                top_n=body.get("top_logprobs") or 0,
                generator=generator,
            )
        content: str | None = text
        tool_calls: list[dict[str, Any]] = []
        if tools and body.get("tool_choice") != "none":
            content, tool_calls = parse_tool_calls(text)
            if tool_calls:
                finish = "tool_calls"
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        want_ids = bool(body.get("return_token_ids"))
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": tool_calls, "reasoning_content": None},
            "logprobs": {"content": [self._logprob_entry(t, lp, top, as_ids) for t, lp, top in zip(generated, logprobs, tops)]} if body.get("logprobs") else None,
            "finish_reason": finish,
            "stop_reason": None,
            "token_ids": generated if want_ids else None,
        }
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": len(generated), "total_tokens": len(prompt_ids) + len(generated)},
            "prompt_token_ids": prompt_ids if want_ids else None,
        }

    def _token_text(self, token_id: int, as_ids: bool) -> str:
        return f"token_id:{token_id}" if as_ids else self.tokenizer.decode([token_id], skip_special_tokens=False)

    def _logprob_entry(self, token_id: int, logprob: float, top: list[tuple[int, float]], as_ids: bool) -> dict[str, Any]:
        # No `bytes`: a byte-level token alone often is not UTF-8 (its text then reads U+FFFD); the ids are exact.
        return {
            "token": self._token_text(token_id, as_ids),
            "logprob": logprob,
            "top_logprobs": [{"token": self._token_text(i, as_ids), "logprob": lp} for i, lp in top],
        }

    @torch.no_grad()
    def _generate(self, prompt_ids: list[int], *, max_new: int, temperature: float, top_p: float, top_k: int, stops: list[str], end_ids: set[int], top_n: int, generator: torch.Generator) -> tuple[list[int], list[float], list[list[tuple[int, float]]], str, str]:
        """Samples up to ``max_new`` tokens after the prompt (a KV cache, one token a step).

        Log-probs: each sampled token's log-softmax of the model's **raw** logits, before temperature, top-k and top-p
        — what vLLM returns by default (its ``logprobs_mode`` ``raw_logprobs``), so a trainer comparing them with its own
        log-probs compares like with like. Under temperature 1 without truncation that is the sampling distribution.
        """
        generated: list[int] = []
        logprobs: list[float] = []
        tops: list[list[tuple[int, float]]] = []
        finish = "length"
        cut: str | None = None  # the text up to a stop string, when one ended the generation
        past = None
        step_input = torch.tensor([prompt_ids], dtype=torch.long)
        while len(generated) < max_new:
            out = self.model(input_ids=step_input, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1].float()
            raw = torch.log_softmax(logits, dim=-1)
            token = _sample(logits, temperature, top_p, top_k, generator)
            generated.append(token)
            logprobs.append(float(raw[token]))
            if top_n:
                values, ids = torch.topk(raw, min(top_n, raw.shape[-1]))
                tops.append([(int(i), float(v)) for v, i in zip(values, ids)])
            else:
                tops.append([])
            if token in end_ids:
                finish = "stop"
                break
            if stops:
                so_far = self.tokenizer.decode(generated, skip_special_tokens=True)
                hit = min((so_far.find(s) for s in stops if s in so_far), default=-1)
                if hit >= 0:
                    # vLLM's rule: the stop string and what follows leave the text; the tokens stay in token_ids.
                    cut = so_far[:hit]
                    finish = "stop"
                    break
            step_input = torch.tensor([[token]], dtype=torch.long)
        text = cut if cut is not None else self.tokenizer.decode(generated, skip_special_tokens=True)
        return generated, logprobs, tops, finish, text


def _reject_constant(name: str) -> Any:
    raise RequestError(f"the body is not JSON: {name} is not a JSON number", None)


def parse_body(raw: bytes) -> Any:
    """The request body's JSON; ``RequestError`` (400) for bytes that are not UTF-8 JSON, ``NaN`` and ``Infinity``
    included (Python's json reads them, JSON has no such numbers)."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RequestError(f"the body is not JSON: {error}", None) from error


def content_length(value: str | None) -> int:
    """The ``Content-Length`` header as a byte count; ``RequestError`` (400) unless it is a non-negative integer."""
    text = (value or "0").strip()
    if not text.isdigit():
        raise RequestError(f"content-length: expected a non-negative integer, got {value!r}", None)
    length = int(text)
    if length > MAX_BODY_BYTES:
        raise RequestError(f"the body is over {MAX_BODY_BYTES} bytes", None)
    return length


def make_http_server(server: PolicyServer, host: str = "127.0.0.1", port: int = 0, log: bool = True, timeout: float = SOCKET_TIMEOUT_S) -> ThreadingHTTPServer:
    """A ``ThreadingHTTPServer`` for ``server`` on ``host:port`` (0: a free port; read ``httpd.server_address``);
    each connection's socket times out after ``timeout`` seconds without progress."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "flywheel-serve/1"
        # StreamRequestHandler sets it on the socket: a stalled client cannot hold a thread forever.
        timeout = None

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            if log:
                sys.stderr.write(f"{self.address_string()} {format % args}\n")

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/v1/models":
                self._send(200, server.models())
            elif path in ("/health", "/v1/health"):
                self._send(200, {"status": "ok", "model": server.name})
            else:
                self._send(404, RequestError(f"no route GET {path}", None, 404).body())

        def do_POST(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0].rstrip("/")
            if path != "/v1/chat/completions":
                self._send(404, RequestError(f"no route POST {path}", None, 404).body())
                return
            try:
                raw = self.rfile.read(content_length(self.headers.get("content-length")))
                self._send(200, server.chat(parse_body(raw)))
            except RequestError as error:
                self._send(error.status, error.body())
            except TimeoutError:
                self.close_connection = True  # the client stalled mid-body: drop it, the thread is free again
            except Exception as error:  # noqa: BLE001 (a bug of this server: 500, and the server keeps serving)
                self._send(500, {"error": {"message": f"{type(error).__name__}: {error}", "type": "InternalServerError", "param": None, "code": 500}})

    Handler.timeout = timeout
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def main(argv: list[str] | None = None) -> int:
    """``serve --model DIR --port N [--served-model-name X] [--host H] [--max-model-len N]``; prints one JSON line when ready."""
    parser = argparse.ArgumentParser(prog="flywheel_trainer serve", description="An OpenAI-compatible server for a checkpoint folder (vLLM's answers).")
    parser.add_argument("--model", required=True, help="the checkpoint folder (config.json, model.safetensors, tokenizer.json)")
    parser.add_argument("--port", type=int, default=8000, help="0: a free port (printed)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--served-model-name", default=None, help="the model id /v1/models lists (default: --model)")
    parser.add_argument("--max-model-len", type=int, default=None, help="context length (default and maximum: the config's max_position_embeddings)")
    parser.add_argument("--max-tokens-cap", type=int, default=DEFAULT_MAX_TOKENS_CAP, help=f"completion tokens of a request without max_tokens (default {DEFAULT_MAX_TOKENS_CAP})")
    parser.add_argument("--socket-timeout", type=float, default=SOCKET_TIMEOUT_S, help=f"seconds a connection may stall (default {SOCKET_TIMEOUT_S:g})")
    args = parser.parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the job log is read by people: one line per request, not progress bars
    try:
        if args.max_tokens_cap < 1:
            raise ValueError("--max-tokens-cap: at least 1")
        server = PolicyServer.load(args.model, args.served_model_name, args.max_model_len, args.max_tokens_cap)
    except (OSError, ValueError) as error:
        print(json.dumps({"level": "ERROR", "message": f"cannot load {args.model}: {error}"}), file=sys.stderr)
        return 2
    httpd = make_http_server(server, args.host, args.port, timeout=args.socket_timeout)
    host, port = httpd.server_address[:2]
    print(json.dumps({"message": "serving", "model": server.name, "url": f"http://{host}:{port}/v1", "port": port, "maxModelLen": server.max_model_len}), flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
