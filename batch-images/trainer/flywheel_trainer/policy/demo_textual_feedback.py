"""Textual feedback at one decision, against the outcome reward alone: the issue's item 6, measured on CPU.

The environment: a coding agent answers a task with one tool call. The student reliably calls ``search_web``, a tool
that does not exist; told the real tools (the hint ``available tools: read_file, run_tests, edit_file`` inserted
before its turn) it calls a real one. That start comes from a short supervised warm-up of the tiny model
(``build_tiny_model``) on synthetic episodes: without the hint ``search_web`` (``BAD_SHARE`` of them) or the task's
real tool, with the hint always the real tool. So the model *knows* the right call when told, as in the article.

From that same start, two runs on rollouts sampled from the student (groups of ``G`` per prompt, one update per
batch, the same optimiser, learning rate and sampling seeds):

- **decision**: the decision-point term alone. The teacher is the same (current) model with the hint inserted before
  the decision, one prefill, hint positions sliced off; ``A_t = clip(log π_T − log π_b, −5, 5)`` on the span (the
  tool name's tokens) only.
- **outcome**: the Dr. GRPO outcome term alone, reward 1 if the called tool exists else 0, on every completion token.

Measured per run: the steps until the bad tool's probability at the decision (the mean over held-out prompts of
``P("search_web" | prefix)``, teacher-forced, no hint) is below ``threshold`` ("not within N" past ``max_steps``),
that probability at the start and at the end, and the locality KL: ``KL(π_start ‖ π_trained)`` over the full
vocabulary, averaged over held-out trajectories' completion positions off the decision span (the arguments and the
closing tokens), measured when the run stops. Two warm starts (``bad_shares``: the student finds a real tool about
one time in ten, or almost never), several seeds each; the table shows medians per start and term.

    python -m flywheel_trainer demo-textual-feedback [--seeds 3] [--max-steps 60] [--bad-shares 0.9 0.98] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import asdict, dataclass, field

import torch

from .losses import aligned_logprobs, decision_loss, dr_grpo_advantages, kl_rows, masked_mean, outcome_loss, teacher_forward, token_logprobs
from .tiny import build_tiny_model

BAD_TOOL = "search_web"
REAL_TOOLS = ("read_file", "run_tests", "edit_file")
HINT = "available tools: read_file, run_tests, edit_file"
SYSTEM = "You are a coding agent."
CLIP = 5.0
CAP = 2.0

# Task templates → the real tool that answers them and its arguments (fixed per tool: the tiny model learns them fast).
_KINDS = (
    ("Why does the test in {f} fail?", "run_tests", {}),
    ("What does {f} do?", "read_file", {"path": "a.py"}),
    ("Rename the helper in {f}.", "edit_file", {"path": "a.py"}),
)
BAD_ARGS = {"q": "a.py"}
_TRAIN_FILES = ("src/app.py", "src/db.py", "lib/util.py", "lib/io.py", "api/main.py", "api/auth.py", "core/cache.py", "core/log.py")
_HELDOUT_FILES = ("src/cli.py", "lib/net.py", "api/user.py", "core/http.py")


@dataclass(frozen=True)
class Task:
    text: str
    tool: str
    args: dict


def tasks(files: tuple[str, ...]) -> list[Task]:
    return [Task(text.format(f=f), tool, args) for f in files for text, tool, args in _KINDS]


@dataclass
class DemoConfig:
    seeds: int = 3
    max_steps: int = 60
    threshold: float = 0.1
    group_size: int = 8
    prompts_per_step: int = 4
    lr: float = 1e-4
    sft_steps: int = 500
    sft_lr: float = 1e-2
    bad_shares: tuple[float, ...] = (0.9, 0.98)
    """Shares of no-hint warm-up episodes that call ``search_web`` (the rest call the task's real tool): one warm
    start per share and seed. The higher, the rarer a group with a success, the outcome term's only signal."""
    max_new_tokens: int = 64


@dataclass
class RunResult:
    term: str
    bad_share: float
    seed: int
    steps_to_fix: int | None
    bad_prob_start: float
    bad_prob_end: float
    locality_kl: float
    steps_run: int
    seconds: float
    curve: list[float] = field(default_factory=list)


class Env:
    """Token ids of the demo's prompts and completions (the byte tokenizer: ids concatenate as texts do).

    A prompt ends with the user's turn; a completion is the assistant's whole turn, ``<|assistant|><tool_call>{"name":
    "…", "arguments": {…}}</tool_call><|end|>``. The decision span runs from ``<|assistant|>`` to the end of the tool's
    name, and the hint is a system message inserted right before it (where ``teacher_forward`` inserts hints).
    """

    def __init__(self, tokenizer) -> None:
        self.tok = tokenizer
        self.end_id = tokenizer.convert_tokens_to_ids("<|end|>")
        self.pad_id = tokenizer.pad_token_id
        self.opening = self.ids('<|assistant|><tool_call>{"name": "')
        self.quote = self.ids('"')[0]
        self.hint_ids = self.ids(f"<|system|>{HINT}<|end|>")

    def ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def prompt(self, task: Task, hint: bool = False) -> list[int]:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task.text}]
        return self.ids(self.tok.apply_chat_template(messages, tokenize=False)) + (self.hint_ids if hint else [])

    def completion(self, tool: str, args: dict) -> list[int]:
        return self.opening + self.ids(f'{tool}", "arguments": {json.dumps(args)}}}</tool_call>') + [self.end_id]

    def span(self, completion: list[int]) -> tuple[int, int]:
        """[start, end) of the decision in a completion: the opening and the tool's name (all of it if malformed)."""
        n = len(self.opening)
        if completion[:n] == self.opening and self.quote in completion[n:]:
            return 0, completion.index(self.quote, n)
        return 0, len(completion)

    def called_tool(self, completion: list[int]) -> str | None:
        s, e = self.span(completion)
        return self.tok.decode(completion[len(self.opening) : e]) if e < len(completion) else None


def _batch(env: Env, prompts: list[list[int]], completions: list[list[int]]):
    """Right-padded ids and attention, the completions' mask and the decision spans' mask (aligned with the ids)."""
    seqs = [p + c for p, c in zip(prompts, completions)]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), env.pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    completion_mask = torch.zeros((len(seqs), width))
    span_mask = torch.zeros((len(seqs), width))
    spans = []
    for i, (p, c) in enumerate(zip(prompts, completions)):
        ids[i, : len(p) + len(c)] = torch.tensor(p + c)
        attention[i, : len(p) + len(c)] = 1
        completion_mask[i, len(p) : len(p) + len(c)] = 1
        s, e = env.span(c)
        span_mask[i, len(p) + s : len(p) + e] = 1
        spans.append((len(p) + s, len(p) + e))
    return ids, attention, completion_mask, span_mask, spans


def _logprobs(model, ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
    return token_logprobs(model(input_ids=ids, attention_mask=attention).logits, ids)


def bad_tool_prob(model, env: Env, eval_tasks: list[Task], hint: bool = False) -> float:
    """Mean over held-out prompts of P(the call names ``search_web`` | prompt, the call's opening), teacher-forced."""
    prompts = [env.prompt(t, hint) + env.opening for t in eval_tasks]
    name = env.ids(BAD_TOOL + '"')
    ids, attention, mask, _, _ = _batch(env, prompts, [name] * len(prompts))
    with torch.no_grad():
        lp = _logprobs(model, ids, attention)
    return float((lp * mask).sum(-1).exp().mean())


class Locality:
    """``KL(π_start ‖ π)`` over held-out trajectories' completion positions off the decision span (the arguments and
    the closing tokens), full vocabulary, averaged over positions. Trajectories: each held-out task with the bad and
    the right call, no hint."""

    def __init__(self, start_model, env: Env, eval_tasks: list[Task]) -> None:
        prompts, completions = [], []
        for t in eval_tasks:
            for tool, args in ((BAD_TOOL, BAD_ARGS), (t.tool, t.args)):
                prompts.append(env.prompt(t))
                completions.append(env.completion(tool, args))
        self.ids, self.attention, completion_mask, span_mask, _ = _batch(env, prompts, completions)
        self.mask = completion_mask * (1 - span_mask)
        self.start = self._rows(start_model)

    def _rows(self, model) -> torch.Tensor:
        with torch.no_grad():
            return aligned_logprobs(model(input_ids=self.ids, attention_mask=self.attention).logits)

    def __call__(self, model) -> float:
        return masked_mean(kl_rows(self.start, self._rows(model)), self.mask)


def warm_start(seed: int, cfg: DemoConfig, bad_share: float) -> tuple[torch.nn.Module, Env]:
    """The tiny model after a short SFT: no hint → ``search_web`` (``bad_share`` of the time), hint → the real tool."""
    model, tok = build_tiny_model(seed=seed)
    env = Env(tok)
    rng = random.Random(seed)
    train = tasks(_TRAIN_FILES)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.sft_lr, weight_decay=0.0)
    # Linear decay to 0: the end of the warm-up settles on the episodes' shares instead of the last batches' noise.
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1 - k / cfg.sft_steps)
    model.train()
    for _ in range(cfg.sft_steps):
        prompts, completions = [], []
        for _ in range(16):
            t = rng.choice(train)
            hint = rng.random() < 0.5
            bad = not hint and rng.random() < bad_share
            prompts.append(env.prompt(t, hint))
            completions.append(env.completion(BAD_TOOL, BAD_ARGS) if bad else env.completion(t.tool, t.args))
        ids, attention, mask, _, _ = _batch(env, prompts, completions)
        loss = -(_logprobs(model, ids, attention) * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
    model.eval()
    return model, env


def _sample(model, env: Env, prompts: list[list[int]], cfg: DemoConfig) -> list[list[int]]:
    """One completion per prompt, sampled at temperature 1 in one left-padded ``generate``."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), env.pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.tensor(p)
        attention[i, width - len(p) :] = 1
    with torch.no_grad():
        out = model.generate(ids, attention_mask=attention, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=cfg.max_new_tokens)
    completions = []
    for row in out[:, width:].tolist():
        c = []
        for tid in row:
            if tid == env.pad_id:
                break
            c.append(tid)
            if tid == env.end_id:
                break
        completions.append(c or [env.end_id])
    return completions


def train_step(term: str, model, opt, env: Env, batch_tasks: list[Task], cfg: DemoConfig) -> dict:
    """One on-policy step of ``term`` alone on ``G`` rollouts per task sampled from ``model`` (no hint)."""
    prompts = [env.prompt(t) for t in batch_tasks for _ in range(cfg.group_size)]
    groups = [g for g in range(len(batch_tasks)) for _ in range(cfg.group_size)]
    completions = _sample(model, env, prompts, cfg)
    ids, attention, completion_mask, span_mask, spans = _batch(env, prompts, completions)
    with torch.no_grad():
        behaviour = _logprobs(model, ids, attention)
    current = _logprobs(model, ids, attention)
    rewards = torch.tensor([1.0 if env.called_tool(c) in REAL_TOOLS else 0.0 for c in completions])
    if term == "decision":
        # The teacher: the same model, the hint inserted right before each decision; one prefill for the batch.
        lengths = attention.sum(-1).tolist()
        teacher_rows = teacher_forward(model, [(ids[i, : lengths[i]], spans[i], env.hint_ids) for i in range(len(spans))], env.pad_id)
        teacher = torch.zeros_like(behaviour)
        for i, row in enumerate(teacher_rows):
            teacher[i, : lengths[i]] = row
        loss = decision_loss(current, behaviour, teacher, span_mask, clip=CLIP, cap=CAP)
    else:
        loss = outcome_loss(current, behaviour, dr_grpo_advantages(rewards, groups), completion_mask, cap=CAP)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"loss": float(loss.detach()), "reward": float(rewards.mean())}


def train_run(term: str, start_state: dict, env: Env, seed: int, cfg: DemoConfig, bad_share: float) -> RunResult:
    """One run of ``term`` ("decision" or "outcome") from the warm start; stops once fixed or at ``max_steps``."""
    model, _ = build_tiny_model(seed=seed)
    model.load_state_dict(start_state)
    model.eval()  # no dropout: the sampling and the training policies are the same
    train = tasks(_TRAIN_FILES)
    heldout = tasks(_HELDOUT_FILES)
    locality = Locality(model, env, heldout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    rng = random.Random(1000 + seed)
    torch.manual_seed(1000 + seed)  # the same sampling seeds for both terms: their first batches are the same rollouts
    curve = [bad_tool_prob(model, env, heldout)]
    fixed_at = 0 if curve[0] < cfg.threshold else None
    started = time.perf_counter()
    step = 0
    while fixed_at is None and step < cfg.max_steps:
        step += 1
        train_step(term, model, opt, env, rng.sample(train, cfg.prompts_per_step), cfg)
        curve.append(bad_tool_prob(model, env, heldout))
        if curve[-1] < cfg.threshold:
            fixed_at = step
    return RunResult(term, bad_share, seed, fixed_at, curve[0], curve[-1], locality(model), step, time.perf_counter() - started, curve)


def run_demo(cfg: DemoConfig, log=print) -> dict:
    """Per start (``bad_shares``) and seed: one warm start, then each term alone from it. Returns every run and the
    medians per (start, term).

    >>> summary = run_demo(DemoConfig(seeds=1, max_steps=5, sft_steps=50, bad_shares=(0.9,)), log=lambda *_: None)
    >>> [(m["badShare"], m["term"]) for m in summary["medians"]]
    [(0.9, 'decision'), (0.9, 'outcome')]
    """
    runs: list[RunResult] = []
    starts = []
    heldout = tasks(_HELDOUT_FILES)
    for share in cfg.bad_shares:
        for seed in range(cfg.seeds):
            t0 = time.perf_counter()
            torch.manual_seed(seed)
            model, env = warm_start(seed, cfg, share)
            start = {"badShare": share, "seed": seed, "badProbNoHint": bad_tool_prob(model, env, heldout), "badProbWithHint": bad_tool_prob(model, env, heldout, hint=True), "sftSeconds": time.perf_counter() - t0}
            starts.append(start)
            log(f"start {share}, seed {seed}: P(bad tool) without the hint {start['badProbNoHint']:.3f}, with it {start['badProbWithHint']:.4f} ({start['sftSeconds']:.1f} s)")
            state = {k: v.clone() for k, v in model.state_dict().items()}
            for term in ("decision", "outcome"):
                r = train_run(term, state, env, seed, cfg, share)
                runs.append(r)
                fixed = r.steps_to_fix if r.steps_to_fix is not None else f"not within {cfg.max_steps}"
                log(f"  {term}: fixed at step {fixed}, P(bad tool) {r.bad_prob_start:.3f} → {r.bad_prob_end:.3f}, locality KL {r.locality_kl:.2e} ({r.seconds:.1f} s)")
    medians = []
    for share in cfg.bad_shares:
        for term in ("decision", "outcome"):
            rs = [r for r in runs if r.term == term and r.bad_share == share]
            fixed = [r.steps_to_fix for r in rs]
            # A run not fixed within max_steps counts as max_steps + 1 in the median (it is at least that).
            steps = statistics.median([f if f is not None else cfg.max_steps + 1 for f in fixed])
            medians.append({
                "badShare": share,
                "term": term,
                "stepsToFix": None if steps > cfg.max_steps else steps,
                "fixedRuns": sum(f is not None for f in fixed),
                "runs": len(rs),
                "badProbStart": statistics.median(r.bad_prob_start for r in rs),
                "badProbEnd": statistics.median(r.bad_prob_end for r in rs),
                "localityKl": statistics.median(r.locality_kl for r in rs),
                "secondsPerStep": statistics.median(r.seconds / max(r.steps_run, 1) for r in rs),
            })
    return {"config": asdict(cfg), "starts": starts, "runs": [asdict(r) for r in runs], "medians": medians}


def markdown_table(summary: dict) -> str:
    cfg = summary["config"]
    n = cfg["max_steps"]
    labels = {"decision": "decision-point (hint teacher)", "outcome": "Dr. GRPO outcome"}
    lines = [
        f"| warm start: P(bad tool) | term (alone) | steps until P(bad tool) < {cfg['threshold']} | runs fixed | P(bad tool) at the stop | locality KL off the span |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for m in summary["medians"]:
        steps = f"{m['stepsToFix']:g}" if m["stepsToFix"] is not None else f"not within {n}"
        lines.append(f"| {m['badProbStart']:.2f} (SFT share {m['badShare']}) | {labels[m['term']]} | {steps} | {m['fixedRuns']}/{m['runs']} | {m['badProbEnd']:.3f} | {m['localityKl']:.1e} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flywheel_trainer demo-textual-feedback", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=DemoConfig.seeds)
    parser.add_argument("--max-steps", type=int, default=DemoConfig.max_steps)
    parser.add_argument("--threshold", type=float, default=DemoConfig.threshold)
    parser.add_argument("--bad-shares", type=float, nargs="+", default=list(DemoConfig.bad_shares), help="warm starts: shares of no-hint episodes calling search_web")
    parser.add_argument("--json", action="store_true", help="print the whole summary as one JSON line after the table")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.max_steps < 1 or not 0 < args.threshold < 1 or not all(0 <= b <= 1 for b in args.bad_shares):
        parser.error("--seeds and --max-steps must be ≥ 1, --threshold in (0, 1), --bad-shares in [0, 1]")
    cfg = DemoConfig(seeds=args.seeds, max_steps=args.max_steps, threshold=args.threshold, bad_shares=tuple(args.bad_shares))
    t0 = time.perf_counter()
    summary = run_demo(cfg)
    print()
    print(f"medians over {cfg.seeds} seeds; G={cfg.group_size} × {cfg.prompts_per_step} prompts per step, lr {cfg.lr}, warm start {cfg.sft_steps} SFT steps ({time.perf_counter() - t0:.0f} s in all)")
    print(markdown_table(summary))
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "runs"} | {"runs": [{k: v for k, v in r.items() if k != "curve"} for r in summary["runs"]]}))
    return 0
