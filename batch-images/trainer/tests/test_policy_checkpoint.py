"""The tiny model and its checkpoint folder: built in code, saved in the HF layout, loaded by transformers."""

import json

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

from flywheel_trainer.policy.checkpoint import load_checkpoint, save_checkpoint, sha256_file
from flywheel_trainer.policy.tiny import CHAT_TEMPLATE, SPECIAL_TOKENS, VOCAB_SIZE, build_tiny_model, build_tokenizer, stop_token_ids


def test_tokenizer_is_byte_level_with_specials_and_a_chat_template():
    tok = build_tokenizer()
    assert tok.encode("A\u00e9") == [65, 0xC3, 0xA9]
    assert [tok.convert_tokens_to_ids(s) for s in SPECIAL_TOKENS] == list(range(256, 256 + len(SPECIAL_TOKENS)))
    assert len(tok) == VOCAB_SIZE
    text = tok.apply_chat_template(
        [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"name": "ls", "arguments": {"path": "."}}}]},
            {"role": "tool", "content": "a.py"},
        ],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert text == '<|user|>list files<|end|><|assistant|><tool_call>{"name": "ls", "arguments": {"path": "."}}</tool_call><|end|><|tool|>a.py<|end|><|assistant|>'
    assert tok.decode(tok.encode(text)) == text
    assert stop_token_ids(tok) == [263, 258]


def test_same_seed_same_weights_and_tiny_size():
    a, _ = build_tiny_model(seed=1)
    b, _ = build_tiny_model(seed=1)
    c, _ = build_tiny_model(seed=2)
    assert sum(p.numel() for p in a.parameters()) < 200_000
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(x, y) for x, y in zip(a.parameters(), c.parameters()))


def test_checkpoint_round_trip_loads_with_transformers(tmp_path):
    model, tok = build_tiny_model(seed=0)
    meta = save_checkpoint(model, tok, tmp_path / "ckpt", {"base": "tiny:0", "step": 3})
    folder = tmp_path / "ckpt"
    assert meta["sha256"] == sha256_file(folder / "model.safetensors")
    assert json.loads((folder / "flywheel.json").read_text())["base"] == "tiny:0"
    assert json.loads((folder / "tokenizer_config.json").read_text())["chat_template"] == CHAT_TEMPLATE

    loaded = AutoModelForCausalLM.from_pretrained(folder)
    loaded_tok = PreTrainedTokenizerFast.from_pretrained(folder)
    assert loaded_tok.chat_template == CHAT_TEMPLATE
    assert loaded_tok.eos_token == "<|end|>" and loaded_tok.pad_token == "<|pad|>"
    ids = torch.tensor([tok.encode("<|user|>hello<|end|><|assistant|>")])
    model.eval()
    loaded.eval()
    with torch.no_grad():
        assert torch.equal(model(ids).logits, loaded(ids).logits)

    again, again_tok, again_meta = load_checkpoint(folder)
    assert again_meta["step"] == 3 and again_tok.encode("x") == [120]
    assert all(torch.equal(x, y) for x, y in zip(model.state_dict().values(), again.state_dict().values()))
