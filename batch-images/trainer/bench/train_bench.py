"""The policy trainer's step time and tokens/s on CPU (``npm run bench:train`` runs it; see bench/train.ts).

For each model shape (``tiny`` ~0.1M parameters, ``50m`` ~50M, both random, from ``build_tiny_model``) it times
``PolicyTrainer.step()`` (train.py) on one batch of synthetic rows (random byte ids, the second half model tokens,
one decision span of 8 tokens per row with a hint, rewards that differ within groups of 4: every term is live) — the
teacher's prefill with the hints, the forward, the three terms, backward and the AdamW step — and, on the same
batch in the same run, a baseline: a plain SFT step (forward, cross-entropy on the model tokens, backward, AdamW).
Medians over ``--repeats`` after one warm-up each; the ratio says what the policy step costs over the plain one.

    python batch-images/trainer/bench/train_bench.py [--shapes tiny,50m] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from flywheel_trainer.policy.shards import Row, Span, collate  # noqa: E402
from flywheel_trainer.policy.tiny import build_tiny_model  # noqa: E402
from flywheel_trainer.policy.train import PolicyTrainer, TrainerConfig  # noqa: E402

# (rows, tokens per row) per shape: small enough for a few seconds a step on two cores.
BATCHES = {"tiny": (8, 256), "50m": (4, 256)}
SPAN = 8
HINT = "available tools: read_file, run_tests, edit_file"


def synthetic_rows(rows: int, length: int, seed: int = 0) -> list[Row]:
    g = torch.Generator().manual_seed(seed)
    out = []
    half = length // 2
    for i in range(rows):
        ids = torch.randint(0, 256, (length,), generator=g).tolist()
        start = half + 4
        out.append(
            Row(
                sample_id=f"s{i}",
                group_id=f"g{i // 4}",
                input_ids=ids,
                loss_mask=[0] * half + [1] * (length - half),
                behaviour_logprobs=[0.0] * half + (-torch.rand(length - half, generator=g) * 5).tolist(),
                reward=float(i % 2),
                has_token_ids=True,
                spans=[Span(start=start, end=start + SPAN, decision_id=f"d{i}", hint=HINT, verified=i % 2 == 0)],
            )
        )
    return out


def _median_seconds(fn, repeats: int) -> list[float]:
    fn()  # warm-up: allocator, kernels' first calls
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def bench_shape(shape: str, repeats: int) -> dict:
    n_rows, length = BATCHES[shape]
    rows = synthetic_rows(n_rows, length)
    model, tok = build_tiny_model(seed=0, shape=shape)
    params = sum(p.numel() for p in model.parameters())
    trainer = PolicyTrainer(model, tok, rows, TrainerConfig(steps=repeats + 1, batch_size=n_rows, learning_rate=1e-5, teacher_choice_weight=0.1))
    policy = _median_seconds(trainer.step, repeats)

    # The baseline: a plain SFT step on the same batch, its own copy of the model and optimiser.
    base_model, _ = build_tiny_model(seed=0, shape=shape)
    base_model.train()
    opt = torch.optim.AdamW(base_model.parameters(), lr=1e-5, weight_decay=0.0)
    batch = collate(rows, tok.pad_token_id)

    def plain_step() -> None:
        logits = base_model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
        ce = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), batch.input_ids[:, 1:].reshape(-1), reduction="none")
        mask = batch.loss_mask[:, 1:].reshape(-1)
        loss = (ce * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    baseline = _median_seconds(plain_step, repeats)
    tokens = int(batch.attention_mask.sum())
    p, b = statistics.median(policy), statistics.median(baseline)
    return {
        "shape": shape,
        "params": params,
        "rows": n_rows,
        "tokensPerStep": tokens,
        "policyStepSeconds": p,
        "policyTokensPerSecond": tokens / p,
        "baselineStepSeconds": b,
        "baselineTokensPerSecond": tokens / b,
        "ratio": p / b,
        "policyRuns": policy,
        "baselineRuns": baseline,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="train_bench.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="tiny,50m")
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("BENCH_RUNS", "5")))
    parser.add_argument("--json", action="store_true", help="print one JSON line only (bench/train.ts reads it)")
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in BATCHES]
    if unknown or args.repeats < 1:
        parser.error(f"--shapes: one of {', '.join(BATCHES)}; --repeats ≥ 1 (got {unknown or args.repeats})")
    torch.manual_seed(0)
    results = [bench_shape(s, args.repeats) for s in shapes]
    summary = {"bench": "train-python", "threads": torch.get_num_threads(), "repeats": args.repeats, "torch": torch.__version__, "shapes": results}
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"policy step vs plain SFT step, CPU, {summary['threads']} threads, median of {args.repeats}")
    print("| model | params | tokens/step | policy step | policy tokens/s | plain step | plain tokens/s | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['shape']} | {r['params'] / 1e6:.2f}M | {r['tokensPerStep']} | {r['policyStepSeconds'] * 1000:.0f} ms | {r['policyTokensPerSecond']:.0f} | {r['baselineStepSeconds'] * 1000:.0f} ms | {r['baselineTokensPerSecond']:.0f} | {r['ratio']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
