"""A byte-level tokenizer and random causal language models built in code: nothing is downloaded.

The tokenizer has the 256 bytes (ids 0..255) and the specials of ``SPECIAL_TOKENS`` (ids 256..263). Its chat template
renders ``<|role|>content<|end|>`` per message; an assistant's tool calls follow its content as Hermes-style
``<tool_call>{"name": …, "arguments": {…}}</tool_call>``. ``<|end|>`` is the end-of-turn token (the tokenizer's
``eos_token``, as ``<|im_end|>`` is Qwen's); ``<|eos|>`` also stops generation.

    >>> model, tokenizer = build_tiny_model(seed=0)
    >>> ids = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=True)
"""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

SPECIAL_TOKENS = ["<|pad|>", "<|bos|>", "<|eos|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>"]
PAD, BOS, EOS, END = "<|pad|>", "<|bos|>", "<|eos|>", "<|end|>"
BYTE_VOCAB = 256
VOCAB_SIZE = BYTE_VOCAB + len(SPECIAL_TOKENS)

CHAT_TEMPLATE = (
    "{%- if tools -%}<|system|>Tools:{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor -%}<|end|>{%- endif -%}"
    "{%- for message in messages -%}"
    "<|{{ message['role'] }}|>{{ message['content'] if message['content'] is string else '' }}"
    "{%- if message['tool_calls'] is defined and message['tool_calls'] -%}"
    "{%- for call in message['tool_calls'] -%}"
    "{%- set fn = call['function'] if call['function'] is defined else call -%}"
    '<tool_call>{"name": {{ fn[\'name\'] | tojson }}, "arguments": '
    "{% if fn['arguments'] is string %}{{ fn['arguments'] }}{% else %}{{ fn['arguments'] | tojson }}{% endif %}"
    "}</tool_call>"
    "{%- endfor -%}"
    "{%- endif -%}"
    "<|end|>"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
)

# Model shapes: "tiny" for tests (~0.1M parameters), "50m" for the CPU benchmark, "0.5b" like Qwen2-0.5B (GPU benchmark).
SHAPES: dict[str, dict] = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=VOCAB_SIZE, max_position_embeddings=32768),
    "50m": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=16, num_attention_heads=8, num_key_value_heads=4, vocab_size=VOCAB_SIZE, max_position_embeddings=8192),
    # Qwen2-0.5B's dimensions, vocabulary included (the LM head is a real share of its FLOPs); the byte tokenizer uses the first 264 ids.
    "0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1_000_000.0),
}


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character map (the alphabet of the ByteLevel pre-tokenizer), in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def build_tokenizer() -> PreTrainedTokenizerFast:
    """The byte-level tokenizer: byte ``b`` is id ``b``; specials follow in ``SPECIAL_TOKENS`` order.

    >>> tok = build_tokenizer(); tok.decode(tok.encode("héllo")) == "héllo"
    True
    """
    vocab = {ch: b for b, ch in _bytes_to_unicode().items()}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    # No regex split: every byte is its own token whatever the text, so ids never depend on word boundaries.
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=BOS, eos_token=END, pad_token=PAD, unk_token=None, chat_template=CHAT_TEMPLATE, model_max_length=32768, padding_side="right")


def stop_token_ids(tokenizer: PreTrainedTokenizerFast) -> list[int]:
    """Ids that end a generation: ``<|end|>`` (end of turn) and ``<|eos|>``."""
    return [tokenizer.convert_tokens_to_ids(END), tokenizer.convert_tokens_to_ids(EOS)]


def build_tiny_model(seed: int = 0, shape: str = "tiny") -> tuple[Qwen2ForCausalLM, PreTrainedTokenizerFast]:
    """A random Qwen2 causal LM of ``shape`` ("tiny", "50m", "0.5b") and the byte tokenizer; same seed, same weights.

    >>> model, tok = build_tiny_model(seed=3)
    >>> sum(p.numel() for p in model.parameters()) < 200_000
    True
    """
    if shape not in SHAPES:
        raise ValueError(f"shape: unknown model shape {shape!r} (one of {', '.join(SHAPES)})")
    tokenizer = build_tokenizer()
    stops = stop_token_ids(tokenizer)
    config = Qwen2Config(
        **SHAPES[shape],
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=stops[0],
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = Qwen2ForCausalLM(config)
    finally:
        torch.random.set_rng_state(generator_state)
    model.generation_config.eos_token_id = stops
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model, tokenizer
