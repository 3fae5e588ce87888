"""The policy trainer on one GPU: tokens/s, MFU and peak memory of full fine-tune steps on a random model shaped like
Qwen2-0.5B (``build_tiny_model(shape="0.5b")``: its dimensions and its 151,936-token vocabulary), and, when vLLM is
importable, the vLLM-versus-trainer log-prob mismatch on the same weights. Prints one JSON object.

What a step is: ``PolicyTrainer.step()`` (batch-images/trainer/flywheel_trainer/policy/train.py) as the Batch job
runs it — float32 weights and AdamW, bf16 autocast, one teacher prefill with a hint per span (no gradient), the
forward, the outcome + decision-point + teacher-choice terms, backward, the optimiser step — on synthetic rows (random
ids, the second half model tokens, one 8-token span per row, rewards that differ within groups: every term is live).

MFU: model FLOPs / (step seconds × peak). Model FLOPs per step (PaLM's appendix-B count, the attention term not halved
for the causal mask): training ``(6·N + 12·L·d·s)`` per trained token, plus the teacher's prefill ``(2·N + 4·L·d·s)``
per teacher token, where N is the matmul parameter count (all parameters: the tied embedding is the LM head's matmul),
L the layers, d the hidden size, s the sequence length. Peak: the H200's dense bf16 989 TFLOPS (``--peak-tflops``).
The figure without the teacher's prefill is given too (``mfuTrainOnly``).

    python bench/gpu/train-mfu.py                 # on the GPU machine: < 5 minutes
    python bench/gpu/train-mfu.py --dry-run       # anywhere: the tiny shape on CPU, a few seconds, same JSON fields
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "batch-images" / "trainer"))

import torch  # noqa: E402

from flywheel_trainer.policy.losses import token_logprobs  # noqa: E402
from flywheel_trainer.policy.shards import Row, Span  # noqa: E402
from flywheel_trainer.policy.tiny import build_tiny_model  # noqa: E402
from flywheel_trainer.policy.train import PolicyTrainer, TrainerConfig, hint_token_ids  # noqa: E402

H200_DENSE_BF16_TFLOPS = 989.0
SPAN = 8
HINT = "available tools: read_file, run_tests, edit_file"


def synthetic_rows(rows: int, length: int, vocab: int, seed: int = 0) -> list[Row]:
    g = torch.Generator().manual_seed(seed)
    half = length // 2
    out = []
    for i in range(rows):
        start = half + 4
        out.append(
            Row(
                sample_id=f"s{i}",
                group_id=f"g{i // 4}",
                input_ids=torch.randint(0, vocab, (length,), generator=g).tolist(),
                loss_mask=[0] * half + [1] * (length - half),
                behaviour_logprobs=[0.0] * half + (-torch.rand(length - half, generator=g) * 5).tolist(),
                reward=float(i % 2),
                has_token_ids=True,
                spans=[Span(start=start, end=start + SPAN, decision_id=f"d{i}", hint=HINT, verified=i % 2 == 0)],
            )
        )
    return out


def model_flops(params: int, layers: int, hidden: int, seq: int, train_tokens: int, teacher_tokens: int, teacher_seq: int) -> tuple[float, float]:
    """(training FLOPs, teacher prefill FLOPs) of one step, PaLM's count (see the module's doc)."""
    train = train_tokens * (6 * params + 12 * layers * hidden * seq)
    teacher = teacher_tokens * (2 * params + 4 * layers * hidden * teacher_seq)
    return float(train), float(teacher)


def vllm_mismatch(model, tokenizer, rows: list[Row], device: str, tokens: int) -> dict:
    """Mean |log π_vLLM − log π_trainer| over the first ``tokens`` ids of a few rows, scored as prompts by vLLM
    (``prompt_logprobs``) and by the trainer's forward (bf16 autocast), on the same saved weights."""
    from vllm import LLM, SamplingParams  # noqa: PLC0415 (optional)

    from flywheel_trainer.policy.checkpoint import save_checkpoint

    prompts = [r.input_ids[:tokens] for r in rows[:4]]
    with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        ids = torch.tensor(prompts, device=device)
        trainer_lp = token_logprobs(model(input_ids=ids).logits, ids).float().cpu()
    with tempfile.TemporaryDirectory() as tmp:
        save_checkpoint(model, tokenizer, tmp, {"base": "random:0.5b", "bench": "train-mfu"})
        model.to("cpu")
        gc.collect()
        torch.cuda.empty_cache()
        llm = LLM(model=tmp, dtype="bfloat16", gpu_memory_utilization=0.3, max_model_len=max(2048, tokens + 16), enforce_eager=True, seed=0)
        outs = llm.generate([{"prompt_token_ids": p} for p in prompts], SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=1.0))
    diffs = []
    for i, o in enumerate(outs):
        for t, entry in enumerate(o.prompt_logprobs or []):
            if t == 0 or entry is None:
                continue
            tok = prompts[i][t]
            if tok in entry:
                diffs.append(abs(float(entry[tok].logprob) - float(trainer_lp[i, t])))
    return {"tokens": len(diffs), "meanAbs": statistics.fmean(diffs) if diffs else None, "max": max(diffs) if diffs else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="train-mfu.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="the tiny shape on CPU, small batch, 2 steps (a check that the script runs)")
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=8, help="measured steps (after 2 warm-up steps)")
    parser.add_argument("--peak-tflops", type=float, default=H200_DENSE_BF16_TFLOPS)
    parser.add_argument("--no-vllm", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cuda = torch.cuda.is_available() and not args.dry_run
    device = "cuda" if cuda else "cpu"
    shape = "0.5b" if not args.dry_run else "tiny"
    rows_n, seq, steps = (args.rows, args.seq, args.steps) if not args.dry_run else (4, 128, 2)
    if not cuda and not args.dry_run:
        print(json.dumps({"bench": "train-mfu", "error": "no CUDA device: run on the GPU machine, or pass --dry-run"}))
        return 2

    torch.manual_seed(0)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    model, tokenizer = build_tiny_model(seed=0, shape=shape)
    cfg = model.config
    params = sum(p.numel() for p in model.parameters())
    rows = synthetic_rows(rows_n, seq, cfg.vocab_size)
    trainer = PolicyTrainer(model, tokenizer, rows, TrainerConfig(steps=steps + 2, batch_size=rows_n, learning_rate=1e-5, teacher_choice_weight=0.1), device=device)
    hint_len = len(hint_token_ids(tokenizer, HINT))

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    for _ in range(2):  # warm-up: allocator, kernel selection
        trainer.step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times, losses = [], []
    for _ in range(steps):
        sync()
        t0 = time.perf_counter()
        metrics = trainer.step()
        sync()
        times.append(time.perf_counter() - t0)
        losses.append(metrics["loss"])
    step_s = statistics.median(times)
    train_tokens = rows_n * seq
    teacher_tokens = rows_n * (seq + hint_len)
    train_flops, teacher_flops = model_flops(params, cfg.num_hidden_layers, cfg.hidden_size, seq, train_tokens, teacher_tokens, seq + hint_len)
    peak = args.peak_tflops * 1e12
    result = {
        "bench": "train-mfu",
        "dryRun": args.dry_run,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "shape": shape,
        "params": params,
        "layers": cfg.num_hidden_layers,
        "hidden": cfg.hidden_size,
        "vocab": cfg.vocab_size,
        "rows": rows_n,
        "seq": seq,
        "precision": "float32 weights + AdamW, bf16 autocast" if cuda else "float32 (CPU)",
        "steps": steps,
        "stepSecondsMedian": step_s,
        "stepSeconds": times,
        "tokensPerSecond": train_tokens / step_s,
        "modelTflopsPerStep": (train_flops + teacher_flops) / 1e12,
        "achievedTflops": (train_flops + teacher_flops) / step_s / 1e12,
        "peakTflops": args.peak_tflops,
        "mfu": (train_flops + teacher_flops) / step_s / peak,
        "mfuTrainOnly": train_flops / step_s / peak,
        "flopsFormula": "per trained token 6N + 12·L·d·s, per teacher-prefill token 2N + 4·L·d·s (PaLM appendix B; attention not halved for causal)",
        "peakMemoryGiB": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "finiteLoss": all(l == l and abs(l) != float("inf") for l in losses),
    }
    del trainer
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    if cuda and not args.no_vllm:
        try:
            import vllm  # noqa: F401, PLC0415

            result["vllmMismatch"] = vllm_mismatch(model.to(device), tokenizer, rows, device, min(seq, 512))
        except ImportError:
            result["vllmMismatch"] = "vllm not importable"
        except Exception as error:  # noqa: BLE001 — the figure is optional; the trainer's are already measured
            result["vllmMismatch"] = f"failed: {type(error).__name__}: {error}"[:500]
    result["wallSeconds"] = time.perf_counter() - started
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
