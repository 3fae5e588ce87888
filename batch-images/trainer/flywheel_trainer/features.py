"""The text encoder: a hashed bag of n-grams, built in code (nothing is downloaded).

Every step is ASCII and integer arithmetic, so ``lib/judges/derive/reward-model.ts`` computes the same vector in
TypeScript bit for bit (FNV-1a 32 over the UTF-8 bytes of each feature):

- tokens: the text lower-cased, runs of ``[a-z0-9]``;
- features: ``w:<token>``, ``b:<token> <next token>``, ``c:<trigram>`` of ``^<token>$``;
- each feature adds 1 to bucket ``fnv1a32(feature) % dim``; a bucket's value is ``log1p(count)``;
- the vector is scaled to unit length (all zeros stays zeros).
"""

from __future__ import annotations

import math
import re

import torch

TOKEN = re.compile(r"[a-z0-9]+")
DEFAULT_DIM = 4096
MAX_TOKENS = 4096


def fnv1a32(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())[:MAX_TOKENS]


def feature_names(text: str) -> list[str]:
    toks = tokens(text)
    out = [f"w:{t}" for t in toks]
    out += [f"b:{a} {b}" for a, b in zip(toks, toks[1:])]
    for t in toks:
        padded = f"^{t}$"
        out += [f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2)]
    return out


def featurize(text: str, dim: int = DEFAULT_DIM) -> list[float]:
    counts: dict[int, int] = {}
    for name in feature_names(text):
        bucket = fnv1a32(name.encode("utf-8")) % dim
        counts[bucket] = counts.get(bucket, 0) + 1
    vec = [0.0] * dim
    for bucket, count in counts.items():
        vec[bucket] = math.log1p(count)
    norm = math.sqrt(sum(v * v for v in vec))
    if norm > 0:
        vec = [v / norm for v in vec]
    return vec


def featurize_batch(texts: list[str], dim: int = DEFAULT_DIM) -> torch.Tensor:
    if not texts:
        return torch.zeros((0, dim), dtype=torch.float32)
    return torch.tensor([featurize(t, dim) for t in texts], dtype=torch.float32)
