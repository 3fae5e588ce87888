"""A small reward model distilled from a judge's verdicts, trained with PyTorch.

- ``pointwise``: text -> one logit per label (a rubric criterion, ``mode:<id>``); ``sigmoid`` is the probability
  that the teacher said pass / yes. Training data: ``{"id", "text", "targets": {label: 0..1}}`` (a label absent from
  ``targets`` is masked out).
- ``pairwise``: text -> one score; ``P(a better than b) = sigmoid(s(a) - s(b))`` (Bradley-Terry). Training data:
  ``{"id", "a", "b", "target": 1 | 0 | 0.5}`` (1: a is better, 0.5: a tie).

The encoder is ``features.featurize`` (hashed n-grams), the network ``Linear(dim, hidden) -> tanh -> Linear(hidden,
heads)``. Training is full-batch Adam on one thread with a fixed seed, so the same data and seed give the same
weights, bit for bit. The output folder holds ``model.safetensors`` (float32: ``hidden.weight``, ``hidden.bias``,
``out.weight``, ``out.bias``) and ``metadata.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from . import FORMAT
from .features import DEFAULT_DIM, featurize_batch

KINDS = ("pointwise", "pairwise")
WEIGHTS_FILE = "model.safetensors"
METADATA_FILE = "metadata.json"


class RewardNet(nn.Module):
    def __init__(self, dim: int, hidden: int, heads: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, heads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.hidden(x)))


@dataclass
class TrainConfig:
    kind: str = "pointwise"
    seed: int = 0
    epochs: int = 300
    hidden: int = 32
    dim: int = DEFAULT_DIM
    lr: float = 0.01
    weight_decay: float = 1e-4


@dataclass
class Trained:
    net: RewardNet
    metadata: dict[str, Any]
    losses: list[float] = field(default_factory=list)


class TrainingDataError(ValueError):
    """The training records are not what the kind needs (names the record and the field)."""


def _labels(records: list[dict[str, Any]]) -> list[str]:
    seen: set[str] = set()
    for i, r in enumerate(records):
        targets = r.get("targets")
        if not isinstance(targets, dict):
            raise TrainingDataError(f"record {i}: field 'targets' must be an object of label -> 0..1")
        seen.update(targets.keys())
    return sorted(seen)


def _configure(seed: int) -> None:
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def train(records: list[dict[str, Any]], config: TrainConfig) -> Trained:
    """Trains a reward model on the teacher's verdicts; deterministic for a given seed."""
    if config.kind not in KINDS:
        raise TrainingDataError(f"kind must be one of {KINDS}, not {config.kind!r}")
    if not records:
        raise TrainingDataError("no training records")
    if config.epochs < 1:
        raise TrainingDataError(f"epochs must be at least 1, not {config.epochs}")
    _configure(config.seed)
    if config.kind == "pointwise":
        labels = _labels(records)
        x = featurize_batch([str(r.get("text", "")) for r in records], config.dim)
        y = torch.full((len(records), len(labels)), float("nan"))
        for i, r in enumerate(records):
            for j, label in enumerate(labels):
                if label in r["targets"]:
                    y[i, j] = float(r["targets"][label])
        mask = ~torch.isnan(y)
        y = torch.nan_to_num(y, nan=0.0)
        heads = len(labels)
    else:
        labels = ["preference"]
        for i, r in enumerate(records):
            if "a" not in r or "b" not in r or "target" not in r:
                raise TrainingDataError(f"record {i}: a pairwise record needs 'a', 'b' and 'target'")
        xa = featurize_batch([str(r["a"]) for r in records], config.dim)
        xb = featurize_batch([str(r["b"]) for r in records], config.dim)
        target = torch.tensor([float(r["target"]) for r in records])
        heads = 1
    net = RewardNet(config.dim, config.hidden, heads)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    bce = nn.BCEWithLogitsLoss(reduction="none")
    losses: list[float] = []
    for _ in range(config.epochs):
        optimizer.zero_grad()
        if config.kind == "pointwise":
            per = bce(net(x), y) * mask
            loss = per.sum() / mask.sum().clamp(min=1)
        else:
            diff = (net(xa) - net(xb)).squeeze(-1)
            loss = bce(diff, target).mean()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    metadata = {
        "format": FORMAT,
        "kind": config.kind,
        "labels": labels,
        "encoder": {"type": "hashed-ngrams", "dim": config.dim, "hash": "fnv1a32", "features": ["w", "b", "c3"]},
        "hidden": config.hidden,
        "seed": config.seed,
        "epochs": config.epochs,
        "lr": config.lr,
        "examples": len(records),
        "loss": {"first": losses[0], "last": losses[-1]},
    }
    return Trained(net=net, metadata=metadata, losses=losses)


def save(trained: Trained, out_dir: str | os.PathLike[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Writes ``model.safetensors`` and ``metadata.json`` (with the weights' sha256); returns the metadata."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in trained.net.state_dict().items()}
    save_file(tensors, str(out / WEIGHTS_FILE), metadata={"format": FORMAT})
    digest = hashlib.sha256((out / WEIGHTS_FILE).read_bytes()).hexdigest()
    metadata = {**trained.metadata, **(extra or {}), "weights": WEIGHTS_FILE, "sha256": digest}
    (out / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return metadata


def load(model_dir: str | os.PathLike[str]) -> tuple[RewardNet, dict[str, Any]]:
    folder = Path(model_dir)
    try:
        metadata = json.loads((folder / METADATA_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError) as error:
        raise TrainingDataError(f"{folder}: no {METADATA_FILE}") from error
    if metadata.get("format") != FORMAT:
        raise TrainingDataError(f"{folder}: not a {FORMAT} model")
    tensors = load_file(str(folder / WEIGHTS_FILE))
    net = RewardNet(metadata["encoder"]["dim"], metadata["hidden"], len(metadata["labels"]))
    net.load_state_dict(tensors)
    net.eval()
    return net, metadata


@torch.no_grad()
def score_texts(net: RewardNet, metadata: dict[str, Any], texts: list[str]) -> list[dict[str, float]]:
    """Pointwise: per text, the probability of each label; pairwise: per text, its raw score under ``preference``."""
    logits = net(featurize_batch(texts, metadata["encoder"]["dim"]))
    values = torch.sigmoid(logits) if metadata["kind"] == "pointwise" else logits
    return [{label: float(row[j]) for j, label in enumerate(metadata["labels"])} for row in values]


@torch.no_grad()
def prefer_a(net: RewardNet, metadata: dict[str, Any], pairs: list[tuple[str, str]]) -> list[float]:
    """Pairwise: the probability that ``a`` is better than ``b`` for each pair."""
    dim = metadata["encoder"]["dim"]
    sa = net(featurize_batch([a for a, _ in pairs], dim)).squeeze(-1)
    sb = net(featurize_batch([b for _, b in pairs], dim)).squeeze(-1)
    return [float(p) for p in torch.sigmoid(sa - sb)]
