"""The checkpoint server answers like vLLM: real HTTP, token ids that decode to the text, the model's own log-probs,
seeded determinism, Hermes tool calls, and 400s that name the field."""

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch

from flywheel_trainer.policy.chat_format import parse_tool_calls
from flywheel_trainer.policy.checkpoint import save_checkpoint
from flywheel_trainer.policy.serve import PolicyServer, make_http_server
from flywheel_trainer.policy.tiny import build_tiny_model

ROOT = Path(__file__).resolve().parents[1]
TOOLS = [{"type": "function", "function": {"name": "list_files", "description": "List files", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt") / "checkpoint"
    model, tokenizer = build_tiny_model(seed=0)
    save_checkpoint(model, tokenizer, out, {"base": "tiny:0"})
    return out


@pytest.fixture(scope="module")
def served(checkpoint):
    server = PolicyServer.load(str(checkpoint), "tiny-ckpt")
    httpd = make_http_server(server, "127.0.0.1", 0, log=False)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def call(base, path, body=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, headers={"content-type": "application/json"}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def chat(base, **fields):
    body = {"model": "tiny-ckpt", "messages": [{"role": "user", "content": "list the files"}], "logprobs": True, "return_token_ids": True, "max_tokens": 24, "seed": 7, **fields}
    status, answer = call(base, "/v1/chat/completions", body)
    assert status == 200, answer
    return answer


def test_models_and_health(served):
    _, base = served
    status, models = call(base, "/v1/models")
    assert status == 200 and [m["id"] for m in models["data"]] == ["tiny-ckpt"]
    assert call(base, "/health")[0] == 200


def test_token_ids_decode_to_the_text_and_logprobs_are_the_models_own(served):
    server, base = served
    answer = chat(base, tools=TOOLS)
    choice = answer["choices"][0]
    ids, prompt_ids = choice["token_ids"], answer["prompt_token_ids"]
    tokenizer = server.tokenizer
    # The prompt is the checkpoint's chat template with the tools, tokenised once.
    expected_prompt = tokenizer.apply_chat_template([{"role": "user", "content": "list the files"}], tools=TOOLS, add_generation_prompt=True, tokenize=False)
    assert prompt_ids == tokenizer.encode(expected_prompt, add_special_tokens=False)
    assert "list_files" in tokenizer.decode(prompt_ids)
    assert 0 < len(ids) <= 24
    assert tokenizer.decode(ids, skip_special_tokens=True) == (choice["message"]["content"] or "")
    logprobs = [entry["logprob"] for entry in choice["logprobs"]["content"]]
    assert len(logprobs) == len(ids)
    assert answer["usage"] == {"prompt_tokens": len(prompt_ids), "completion_tokens": len(ids), "total_tokens": len(prompt_ids) + len(ids)}
    assert choice["finish_reason"] == ("length" if len(ids) == 24 else "stop")
    # One prefill of prompt + completion gives the same log-probs (raw log-softmax, temperature not applied).
    with torch.no_grad():
        logits = server.model(input_ids=torch.tensor([prompt_ids + ids])).logits[0].float()
    recomputed = torch.log_softmax(logits, dim=-1)[len(prompt_ids) - 1 : -1].gather(1, torch.tensor(ids)[:, None])[:, 0]
    assert torch.allclose(recomputed, torch.tensor(logprobs), atol=1e-4)


def test_seeded_requests_repeat_and_greedy_takes_the_argmax(served):
    server, base = served
    first, again, other = chat(base, seed=11), chat(base, seed=11), chat(base, seed=12)
    assert first["choices"][0]["token_ids"] == again["choices"][0]["token_ids"]
    assert first["choices"][0]["token_ids"] != other["choices"][0]["token_ids"]
    greedy = chat(base, temperature=1e-9, max_tokens=6, seed=None)
    ids, prompt_ids = greedy["choices"][0]["token_ids"], greedy["prompt_token_ids"]
    with torch.no_grad():
        logits = server.model(input_ids=torch.tensor([prompt_ids + ids])).logits[0]
    assert ids == logits[len(prompt_ids) - 1 : -1].argmax(-1).tolist()[: len(ids)]


def test_max_tokens_stop_strings_and_token_id_strings(served):
    _, base = served
    answer = chat(base, max_completion_tokens=5, temperature=0, return_tokens_as_token_ids=True)
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "length" and len(choice["token_ids"]) == 5
    assert [e["token"] for e in choice["logprobs"]["content"]] == [f"token_id:{i}" for i in choice["token_ids"]]
    full = chat(base, seed=3, max_tokens=40)["choices"][0]["message"]["content"]
    # An ASCII character past the start (a lone byte of a multi-byte character decodes differently when cut).
    stop = next(c for c in full[2:] if c.isascii() and c.isprintable())
    cut = chat(base, seed=3, max_tokens=40, stop=["\u2603", stop])["choices"][0]
    assert cut["finish_reason"] == "stop" and cut["message"]["content"] == full[: full.find(stop)]


def test_tool_history_is_rendered_into_the_prompt(served):
    server, base = served
    messages = [
        {"role": "system", "content": "You are a coder."},
        {"role": "user", "content": [{"type": "text", "text": "list"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": '{"path": "."}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"},
    ]
    answer = chat(base, messages=messages, tools=TOOLS, max_tokens=2)
    prompt = server.tokenizer.decode(answer["prompt_token_ids"])
    assert '<|assistant|><tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call><|end|>' in prompt
    assert "<|tool|>a.py b.py<|end|>" in prompt and "<|user|>list<|end|>" in prompt
    assert prompt.endswith("<|assistant|>")


def test_hermes_tool_calls_are_parsed_and_malformed_ones_stay_content():
    content, calls = parse_tool_calls('Looking.\n<tool_call>{"name": "list_files", "arguments": {"path": "src"}}</tool_call>\n<tool_call>{"name": "read", "arguments": "{\\"f\\": 1}"}</tool_call>')
    assert content == "Looking."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [("list_files", {"path": "src"}), ("read", {"f": 1})]
    assert all(c["id"].startswith("chatcmpl-tool-") and c["type"] == "function" for c in calls)
    # Cut off by max_tokens inside the last call: still a call when its JSON is whole (vLLM's pattern).
    assert parse_tool_calls('<tool_call>{"name": "ls", "arguments": {}}')[1][0]["function"]["name"] == "ls"
    for bad in ['<tool_call>{"name": "ls", "arguments": </tool_call>', "<tool_call>[1]</tool_call>", '<tool_call>{"arguments": {}}</tool_call>', "no call here"]:
        assert parse_tool_calls(bad) == (bad, [])


def test_a_generated_tool_call_comes_back_as_tool_calls(checkpoint):
    server = PolicyServer.load(str(checkpoint), "scripted")
    text = 'ok <tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>'
    end = server.tokenizer.convert_tokens_to_ids("<|end|>")
    scripted = server.tokenizer.encode(text, add_special_tokens=False) + [end]
    # The sampling replaced by a script (the random model will not write a call); the answer's shaping is the server's.
    server._generate = lambda prompt_ids, **_: (scripted, [-1.0] * len(scripted), [[]] * len(scripted), "stop", text)
    answer = server.chat({"messages": [{"role": "user", "content": "ls"}], "tools": TOOLS, "logprobs": True, "return_token_ids": True})
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "ok"
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in choice["message"]["tool_calls"]] == [("list_files", {"path": "."})]
    assert choice["token_ids"] == scripted
    plain = server.chat({"messages": [{"role": "user", "content": "ls"}], "tools": TOOLS, "tool_choice": "none"})["choices"][0]
    assert plain["finish_reason"] == "stop" and plain["message"]["content"] == text and plain["message"]["tool_calls"] == []


@pytest.mark.parametrize(
    "body, param",
    [
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": "hi"}], "temperature": -1}, "temperature"),
        ({"messages": [{"role": "user", "content": "hi"}], "top_p": 0}, "top_p"),
        ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}, "max_tokens"),
        ({"messages": [{"role": "user", "content": "hi"}], "seed": 2**64}, "seed"),
        ({"messages": [{"role": "user", "content": "hi"}], "stop": [""]}, "stop[0]"),
        ({"messages": [{"role": "user", "content": "hi"}], "stream": True}, "stream"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": 2}, "n"),
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
        ({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 40000}, "max_tokens"),
        ({"messages": [{"role": "user", "content": "x" * 40000}]}, "messages"),
    ],
)
def test_bad_requests_get_400_naming_the_field(served, body, param):
    _, base = served
    status, answer = call(base, "/v1/chat/completions", body)
    assert status == 400, answer
    assert answer["error"]["param"] == param and answer["error"]["code"] == 400 and answer["error"]["type"] == "BadRequestError"
    assert param.split("[")[0].split(".")[0] in answer["error"]["message"] or "context length" in answer["error"]["message"]


def test_not_json_unknown_model_and_unknown_route(served):
    _, base = served
    status, answer = call(base, "/v1/chat/completions", raw=b"{nope")
    assert status == 400 and "not JSON" in answer["error"]["message"]
    status, answer = call(base, "/v1/chat/completions", {"model": "other", "messages": [{"role": "user", "content": "hi"}]})
    assert status == 404 and answer["error"]["param"] == "model"
    assert call(base, "/v1/nothing")[0] == 404


def test_the_command_line_serves_on_a_free_port(checkpoint):
    process = subprocess.Popen([sys.executable, "-m", "flywheel_trainer", "serve", "--model", str(checkpoint), "--port", "0", "--served-model-name", "cli-ckpt"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        ready = json.loads(process.stdout.readline())
        assert ready["message"] == "serving" and ready["model"] == "cli-ckpt"
        status, models = call(f"http://127.0.0.1:{ready['port']}", "/v1/models")
        assert status == 200 and models["data"][0]["id"] == "cli-ckpt"
    finally:
        process.terminate()
        process.wait(timeout=30)
    missing = subprocess.run([sys.executable, "-m", "flywheel_trainer", "serve", "--model", str(checkpoint.parent / "absent"), "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "cannot load" in missing.stderr


def _raw_post(base, head: bytes, body: bytes = b"") -> tuple[int, dict]:
    import http.client
    import socket

    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n" + head + b"\r\n" + body)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read())


@pytest.mark.parametrize("length", [b"-5", b"ten", b"1e3"])
def test_a_bad_content_length_gets_400(served, length):
    _, base = served
    status, answer = _raw_post(base, b"content-length: " + length + b"\r\n", b"{}")
    assert status == 400 and "content-length" in answer["error"]["message"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_in_the_body_get_400(served, constant):
    _, base = served
    raw = ('{"messages": [{"role": "user", "content": "hi"}], "temperature": %s}' % constant).encode()
    status, answer = call(base, "/v1/chat/completions", raw=raw)
    assert status == 400 and constant.lstrip("-") in answer["error"]["message"]


def test_a_request_without_max_tokens_stops_at_the_cap(checkpoint):
    server = PolicyServer.load(str(checkpoint), "capped", max_tokens_cap=3)
    # An end token would stop it early: with none, only the cap ends the generation.
    server.end_ids = set()
    answer = server.chat({"messages": [{"role": "user", "content": "hi"}], "seed": 1})
    assert answer["usage"]["completion_tokens"] == 3 and answer["choices"][0]["finish_reason"] == "length"
    explicit = server.chat({"messages": [{"role": "user", "content": "hi"}], "seed": 1, "max_tokens": 5})
    assert explicit["usage"]["completion_tokens"] == 5


def test_a_stalled_client_is_dropped_after_the_socket_timeout(checkpoint):
    import socket

    server = PolicyServer.load(str(checkpoint), "timeouts")
    httpd = make_http_server(server, "127.0.0.1", 0, log=False, timeout=0.5)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(httpd.server_address[:2], timeout=20) as sock:
            # Promises 100 bytes, sends 2: the handler's read times out and the server closes the connection.
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{}")
            assert sock.recv(1024) == b""
    finally:
        httpd.shutdown()
        httpd.server_close()
