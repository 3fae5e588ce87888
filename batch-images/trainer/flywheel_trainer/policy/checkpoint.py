"""Checkpoint folders in the Hugging Face layout, loadable by ``AutoModelForCausalLM.from_pretrained`` and vLLM.

A folder holds ``config.json``, ``generation_config.json``, ``model.safetensors``, ``tokenizer.json``,
``tokenizer_config.json`` (with the ``chat_template``) and ``flywheel.json`` (the caller's metadata, the sha256 of
the weights file, the format). ``flywheel.json`` is written last: a reader that finds it finds the weights it names.

    >>> model, tok = build_tiny_model(seed=0)
    >>> meta = save_checkpoint(model, tok, "/tmp/ckpt", {"base": "tiny:0"})
    >>> model2, tok2, meta2 = load_checkpoint("/tmp/ckpt")
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

CHECKPOINT_FORMAT = "flywheel.policy-checkpoint/1"
METADATA_FILE = "flywheel.json"
WEIGHTS_FILE = "model.safetensors"


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _plain_model(model: torch.nn.Module) -> torch.nn.Module:
    """A LoRA model (peft) merged into its base weights: the checkpoint is a full model any server loads."""
    if hasattr(model, "merge_and_unload"):
        import copy

        return copy.deepcopy(model).merge_and_unload()
    return model


def save_checkpoint(model: torch.nn.Module, tokenizer: PreTrainedTokenizerFast, out_dir: str | os.PathLike[str], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """Writes the HF folder and returns the metadata written to ``flywheel.json`` (with ``sha256`` of the weights).

    @example save_checkpoint(model, tokenizer, "out/checkpoint", {"base": "tiny:0", "dataset": "ds-1", "step": 20})
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plain = _plain_model(model)
    plain.save_pretrained(out, safe_serialization=True)
    # chat_template inside tokenizer_config.json (not a separate .jinja): the file vLLM and older readers look in.
    tokenizer.save_pretrained(out, save_jinja_files=False)
    written = {
        **(metadata or {}),
        "format": CHECKPOINT_FORMAT,
        "architecture": type(plain).__name__,
        "parameters": int(sum(p.numel() for p in plain.parameters())),
        "weightsFile": WEIGHTS_FILE,
        "sha256": sha256_file(out / WEIGHTS_FILE),
    }
    tmp = out / f".{METADATA_FILE}.tmp"
    tmp.write_text(json.dumps(written, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out / METADATA_FILE)
    return written


def load_checkpoint(directory: str | os.PathLike[str], dtype: torch.dtype = torch.float32) -> tuple[torch.nn.Module, PreTrainedTokenizerFast, dict[str, Any]]:
    """Loads a folder ``save_checkpoint`` wrote (or any HF causal-LM folder: metadata is then ``{}``).

    @example model, tokenizer, metadata = load_checkpoint("out/checkpoint")
    """
    folder = Path(directory)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: not a checkpoint folder (no config.json)")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    meta_path = folder / METADATA_FILE
    metadata = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    return model, tokenizer, metadata
