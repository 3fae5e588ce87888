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

With ``--episode-decisions N`` (N > 1) each episode is N tool-call turns (the user asks N sub-questions in turn, the
environment answers each call), the warm start calls ``search_web`` at one fixed turn (``N // 2``, a docs question)
and real tools elsewhere, and the reward is 1 only when every call exists. The decision term's span is that one bad
decision's tokens (hint inserted before it); the outcome term covers every student token of the episode; the
locality KL now also covers the N − 1 good decisions' turns: where credit spread over the episode would show.

    python -m flywheel_trainer demo-textual-feedback [--seeds 3] [--max-steps 60] [--bad-shares 0.9 0.98] [--json]
    python -m flywheel_trainer demo-textual-feedback --episode-decisions 6 --bad-shares 0.98 --max-steps 12 \
        --sft-steps 200 --sft-batch 8 --prompts-per-step 2
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
    max_new_tokens: int | None = None
    """Per turn; ``None``: 64 with one decision (today's), 96 with more (a call with arguments is ~80 tokens: a whole
    turn, so the next one follows a closed call)."""
    episode_decisions: int = 1
    """Tool-call turns per episode (N). 1: today's one-decision episodes. N > 1: the user asks N sub-questions in
    turn (``Step k: …``), each answered by a real tool; the warm start calls ``search_web`` at one fixed turn
    (``bad_at``) only, and the reward is 1 only when every call of the episode exists."""
    bad_at: int | None = None
    """The 0-based turn where the warm start calls ``search_web`` (default ``episode_decisions // 2``)."""
    sft_batch: int = 16

    @property
    def new_tokens(self) -> int:
        return self.max_new_tokens or (64 if self.episode_decisions == 1 else 96)

    @property
    def bad_turn(self) -> int:
        return self.episode_decisions // 2 if self.bad_at is None else self.bad_at


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


Episode = tuple  # of Task: the sub-questions of one episode, one tool call each


# With N > 1 decisions the sub-question at the bad turn is of its own kind (its real tool is read_file): the one
# question the warm start answers with search_web, as a student errs on one kind of step, not on a turn number.
_DOCS = ("Find the docs for {f}.", "read_file", {"path": "a.py"})


def episodes(files: tuple[str, ...], n: int, seed: int, bad_turn: int = 0) -> list[Episode]:
    """The episodes over ``files``' tasks: each task alone when ``n`` is 1 (today's order), else 4 × (tasks // n)
    fixed draws of ``n − 1`` distinct tasks with a docs question about one of the files at ``bad_turn`` (``seed``:
    the train and the held-out pools differ)."""
    pool = tasks(files)
    if n == 1:
        return [(t,) for t in pool]
    rng = random.Random(seed)
    out = []
    for _ in range(4 * max(len(pool) // n, 1)):
        ep = rng.sample(pool, n - 1)
        docs = Task(_DOCS[0].format(f=rng.choice(files)), _DOCS[1], _DOCS[2])
        out.append(tuple(ep[:bad_turn]) + (docs,) + tuple(ep[bad_turn:]))
    return out


@dataclass
class Rollout:
    """One episode's tokens: ``ids`` (prompt, the student's turns, the environment's replies), ``model`` (1 on the
    student's tokens), one ``spans`` entry per decision (``[start, end)`` in ``ids``) and the tool each turn called."""

    ids: list[int]
    model: list[int]
    spans: list[tuple[int, int]]
    tools: list[str | None]

    def ok(self) -> bool:
        return all(t in REAL_TOOLS for t in self.tools)

    def failing_turn(self, default: int) -> int:
        """The first turn that called a tool that does not exist (what the harness's tool.unknown event locates),
        else ``default``."""
        return next((k for k, t in enumerate(self.tools) if t not in REAL_TOOLS), default)


class Env:
    """Token ids of the demo's episodes (the byte tokenizer: ids concatenate as texts do).

    A prompt ends with the user's (first) turn; each student turn is ``<|assistant|><tool_call>{"name": "…",
    "arguments": {…}}</tool_call><|end|>``; with N > 1 decisions the environment answers each call
    (``<|tool|>ok<|end|>`` or an unknown-tool error) and asks the next sub-question (``<|user|>Step k: …<|end|>``).
    A decision's span runs from its ``<|assistant|>`` to the end of the tool's name, and the hint is a system message
    inserted right before it (where ``teacher_forward`` inserts hints).
    """

    def __init__(self, tokenizer, decisions: int = 1) -> None:
        self.tok = tokenizer
        self.n = decisions
        self.end_id = tokenizer.convert_tokens_to_ids("<|end|>")
        self.pad_id = tokenizer.pad_token_id
        self.opening = self.ids('<|assistant|><tool_call>{"name": "')
        self.quote = self.ids('"')[0]
        self.hint_ids = self.ids(f"<|system|>{HINT}<|end|>")

    def ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def question(self, task: Task, k: int) -> str:
        return task.text if self.n == 1 else f"Step {k + 1}: {task.text}"

    def prompt(self, task: Task, hint: bool = False) -> list[int]:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": self.question(task, 0)}]
        return self.ids(self.tok.apply_chat_template(messages, tokenize=False)) + (self.hint_ids if hint else [])

    def reply(self, tool: str | None, next_task: Task, k: int) -> list[int]:
        """The environment's tokens after turn ``k``'s call: the tool's answer, then sub-question ``k + 1``."""
        answer = "ok" if tool in REAL_TOOLS else f"error: no tool named {tool!r}"
        return self.ids(f"<|tool|>{answer}<|end|><|user|>{self.question(next_task, k + 1)}<|end|>")

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

    def rollout(self, episode: Episode, turns: list[list[int]]) -> Rollout:
        """The episode with the student's ``turns`` (completions) and the environment's replies between them."""
        ids = self.prompt(episode[0])
        model = [0] * len(ids)
        spans, tools = [], []
        for k, c in enumerate(turns):
            s, e = self.span(c)
            spans.append((len(ids) + s, len(ids) + e))
            tools.append(self.called_tool(c))
            ids, model = ids + c, model + [1] * len(c)
            if k + 1 < len(episode):
                r = self.reply(tools[-1], episode[k + 1], k)
                ids, model = ids + r, model + [0] * len(r)
        return Rollout(ids, model, spans, tools)

    def scripted(self, episode: Episode, bad_turn: int | None = None, hint_turn: int | None = None) -> Rollout:
        """The episode with each sub-question's real call, ``search_web`` at ``bad_turn``, and the hint inserted
        right before turn ``hint_turn``'s decision."""
        turns = [self.completion(BAD_TOOL, BAD_ARGS) if k == bad_turn else self.completion(t.tool, t.args) for k, t in enumerate(episode)]
        r = self.rollout(episode, turns)
        if hint_turn is None:
            return r
        at, h = r.spans[hint_turn][0], len(self.hint_ids)
        shift = [(s + h, e + h) if s >= at else (s, e) for s, e in r.spans]
        return Rollout(r.ids[:at] + self.hint_ids + r.ids[at:], r.model[:at] + [0] * h + r.model[at:], shift, r.tools)


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


def _pad_rollouts(env: Env, rollouts: list[Rollout], turns: list[int]):
    """Right-padded ids and attention, the student's tokens' mask, and the mask and span of decision ``turns[i]``."""
    width = max(len(r.ids) for r in rollouts)
    ids = torch.full((len(rollouts), width), env.pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    model_mask = torch.zeros((len(rollouts), width))
    span_mask = torch.zeros((len(rollouts), width))
    spans = []
    for i, (r, k) in enumerate(zip(rollouts, turns)):
        n = len(r.ids)
        ids[i, :n] = torch.tensor(r.ids)
        attention[i, :n] = 1
        model_mask[i, :n] = torch.tensor(r.model, dtype=torch.float)
        s, e = r.spans[k]
        span_mask[i, s:e] = 1
        spans.append((s, e))
    return ids, attention, model_mask, span_mask, spans


def _logprobs(model, ids: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
    return token_logprobs(model(input_ids=ids, attention_mask=attention).logits, ids)


def bad_tool_prob(model, env: Env, eval_episodes: list, hint: bool = False, bad_turn: int = 0) -> float:
    """Mean over held-out episodes of P(the call at turn ``bad_turn`` names ``search_web`` | the episode so far with
    real calls before it, the call's opening), teacher-forced. A bare ``Task`` is a one-decision episode."""
    prompts = []
    for ep in eval_episodes:
        ep = ep if isinstance(ep, tuple) else (ep,)
        r = env.scripted(ep, hint_turn=bad_turn if hint else None)
        prompts.append(r.ids[: r.spans[bad_turn][0]] + env.opening)
    name = env.ids(BAD_TOOL + '"')
    ids, attention, mask, _, _ = _batch(env, prompts, [name] * len(prompts))
    with torch.no_grad():
        lp = _logprobs(model, ids, attention)
    return float((lp * mask).sum(-1).exp().mean())


class Locality:
    """``KL(π_start ‖ π)`` over held-out episodes' student positions off the bad decision's span (its arguments and
    closing tokens, and with N > 1 every other decision's whole turn), full vocabulary, averaged over positions.
    Episodes: each held-out one with the bad and with the right call at ``bad_turn``, no hint."""

    def __init__(self, start_model, env: Env, eval_episodes: list, bad_turn: int = 0) -> None:
        eps = [ep if isinstance(ep, tuple) else (ep,) for ep in eval_episodes]
        rollouts = [env.scripted(ep, bad_turn=b) for ep in eps for b in (bad_turn, None)]
        self.ids, self.attention, model_mask, span_mask, _ = _pad_rollouts(env, rollouts, [bad_turn] * len(rollouts))
        self.mask = model_mask * (1 - span_mask)
        self.start = self._rows(start_model)

    def _rows(self, model) -> torch.Tensor:
        with torch.no_grad():
            return aligned_logprobs(model(input_ids=self.ids, attention_mask=self.attention).logits)

    def __call__(self, model) -> float:
        return masked_mean(kl_rows(self.start, self._rows(model)), self.mask)


def warm_start(seed: int, cfg: DemoConfig, bad_share: float) -> tuple[torch.nn.Module, Env]:
    """The tiny model after a short SFT: no hint → ``search_web`` at the bad turn (``bad_share`` of the time) and
    real tools elsewhere; the hint before the bad turn → the real tool there."""
    model, tok = build_tiny_model(seed=seed)
    env = Env(tok, cfg.episode_decisions)
    rng = random.Random(seed)
    train = episodes(_TRAIN_FILES, cfg.episode_decisions, seed=0, bad_turn=cfg.bad_turn)
    k = cfg.bad_turn
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.sft_lr, weight_decay=0.0)
    # Linear decay to 0: the end of the warm-up settles on the episodes' shares instead of the last batches' noise.
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 - step / cfg.sft_steps)
    model.train()
    for _ in range(cfg.sft_steps):
        rollouts = []
        for _ in range(cfg.sft_batch):
            ep = rng.choice(train)
            hint = rng.random() < 0.5
            bad = not hint and rng.random() < bad_share
            rollouts.append(env.scripted(ep, bad_turn=k if bad else None, hint_turn=k if hint else None))
        ids, attention, mask, span, _ = _pad_rollouts(env, rollouts, [k] * len(rollouts))
        # The bad turn's decision weighs N times (1 + (N − 1)·span): as much as in a one-decision episode, so the
        # warm start learns it in as few steps (with N = 1 this is today's plain mean).
        mask = mask * (1 + (cfg.episode_decisions - 1) * span)
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
        out = model.generate(ids, attention_mask=attention, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=cfg.new_tokens)
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


def sample_rollouts(model, env: Env, batch: list[Episode], cfg: DemoConfig) -> list[Rollout]:
    """One episode per entry sampled from ``model`` (no hint): one ``generate`` per turn for the whole batch, the
    environment's reply and the next sub-question appended between turns."""
    turns: list[list[list[int]]] = [[] for _ in batch]
    seqs = [env.prompt(ep[0]) for ep in batch]
    for k in range(cfg.episode_decisions):
        for i, c in enumerate(_sample(model, env, seqs, cfg)):
            turns[i].append(c)
            seqs[i] = seqs[i] + c
            if k + 1 < cfg.episode_decisions:
                seqs[i] = seqs[i] + env.reply(env.called_tool(c), batch[i][k + 1], k)
    return [env.rollout(ep, ts) for ep, ts in zip(batch, turns)]


def train_step(term: str, model, opt, env: Env, batch_episodes: list[Episode], cfg: DemoConfig) -> dict:
    """One on-policy step of ``term`` alone on ``G`` rollouts per episode sampled from ``model`` (no hint)."""
    batch = [ep for ep in batch_episodes for _ in range(cfg.group_size)]
    groups = [g for g in range(len(batch_episodes)) for _ in range(cfg.group_size)]
    rollouts = sample_rollouts(model, env, batch, cfg)
    # The decision term's span: the first call of a tool that does not exist (else the bad turn), hint before it.
    turns = [r.failing_turn(cfg.bad_turn) for r in rollouts]
    ids, attention, model_mask, span_mask, spans = _pad_rollouts(env, rollouts, turns)
    with torch.no_grad():
        behaviour = _logprobs(model, ids, attention)
    current = _logprobs(model, ids, attention)
    rewards = torch.tensor([1.0 if r.ok() else 0.0 for r in rollouts])
    if term == "decision":
        # The teacher: the same model, the hint inserted right before each decision; one prefill for the batch.
        lengths = attention.sum(-1).tolist()
        teacher_rows = teacher_forward(model, [(ids[i, : lengths[i]], spans[i], env.hint_ids) for i in range(len(spans))], env.pad_id)
        teacher = torch.zeros_like(behaviour)
        for i, row in enumerate(teacher_rows):
            teacher[i, : lengths[i]] = row
        loss = decision_loss(current, behaviour, teacher, span_mask, clip=CLIP, cap=CAP)
    else:
        # Every student token of the episode, all N decisions: the outcome reward cannot say which one failed.
        loss = outcome_loss(current, behaviour, dr_grpo_advantages(rewards, groups), model_mask, cap=CAP)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {"loss": float(loss.detach()), "reward": float(rewards.mean())}


def train_run(term: str, start_state: dict, env: Env, seed: int, cfg: DemoConfig, bad_share: float) -> RunResult:
    """One run of ``term`` ("decision" or "outcome") from the warm start; stops once fixed or at ``max_steps``."""
    model, _ = build_tiny_model(seed=seed)
    model.load_state_dict(start_state)
    model.eval()  # no dropout: the sampling and the training policies are the same
    train = episodes(_TRAIN_FILES, cfg.episode_decisions, seed=0, bad_turn=cfg.bad_turn)
    heldout = episodes(_HELDOUT_FILES, cfg.episode_decisions, seed=1, bad_turn=cfg.bad_turn)
    k = cfg.bad_turn
    locality = Locality(model, env, heldout, k)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    rng = random.Random(1000 + seed)
    torch.manual_seed(1000 + seed)  # the same sampling seeds for both terms: their first batches are the same rollouts
    curve = [bad_tool_prob(model, env, heldout, bad_turn=k)]
    fixed_at = 0 if curve[0] < cfg.threshold else None
    started = time.perf_counter()
    step = 0
    while fixed_at is None and step < cfg.max_steps:
        step += 1
        train_step(term, model, opt, env, rng.sample(train, cfg.prompts_per_step), cfg)
        curve.append(bad_tool_prob(model, env, heldout, bad_turn=k))
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
    heldout = episodes(_HELDOUT_FILES, cfg.episode_decisions, seed=1, bad_turn=cfg.bad_turn)
    k = cfg.bad_turn
    for share in cfg.bad_shares:
        for seed in range(cfg.seeds):
            t0 = time.perf_counter()
            torch.manual_seed(seed)
            model, env = warm_start(seed, cfg, share)
            start = {"badShare": share, "seed": seed, "badProbNoHint": bad_tool_prob(model, env, heldout, bad_turn=k), "badProbWithHint": bad_tool_prob(model, env, heldout, hint=True, bad_turn=k), "sftSeconds": time.perf_counter() - t0}
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
    parser.add_argument("--episode-decisions", type=int, default=DemoConfig.episode_decisions, help="tool-call turns per episode (N); the bad one is turn N // 2, the reward needs every call to exist")
    parser.add_argument("--sft-steps", type=int, default=DemoConfig.sft_steps, help="warm-start SFT steps")
    parser.add_argument("--sft-batch", type=int, default=DemoConfig.sft_batch, help="warm-start episodes per SFT step")
    parser.add_argument("--prompts-per-step", type=int, default=DemoConfig.prompts_per_step, help="episodes per RL step (each sampled group-size times)")
    parser.add_argument("--json", action="store_true", help="print the whole summary as one JSON line after the table")
    args = parser.parse_args(argv)
    if min(args.seeds, args.max_steps, args.episode_decisions, args.sft_steps, args.sft_batch, args.prompts_per_step) < 1 or not 0 < args.threshold < 1 or not all(0 <= b <= 1 for b in args.bad_shares):
        parser.error("--seeds, --max-steps, --episode-decisions, --sft-steps, --sft-batch and --prompts-per-step must be ≥ 1, --threshold in (0, 1), --bad-shares in [0, 1]")
    cfg = DemoConfig(
        seeds=args.seeds,
        max_steps=args.max_steps,
        threshold=args.threshold,
        bad_shares=tuple(args.bad_shares),
        episode_decisions=args.episode_decisions,
        sft_steps=args.sft_steps,
        sft_batch=args.sft_batch,
        prompts_per_step=args.prompts_per_step,
    )
    t0 = time.perf_counter()
    summary = run_demo(cfg)
    print()
    print(f"medians over {cfg.seeds} seeds; {cfg.episode_decisions} decision(s) per episode (bad at turn {cfg.bad_turn + 1}); G={cfg.group_size} × {cfg.prompts_per_step} episodes per step, lr {cfg.lr}, warm start {cfg.sft_steps} SFT steps × {cfg.sft_batch} ({time.perf_counter() - t0:.0f} s in all)")
    print(markdown_table(summary))
    if args.json:
        print(json.dumps({k: v for k, v in summary.items() if k != "runs"} | {"runs": [{k: v for k, v in r.items() if k != "curve"} for r in summary["runs"]]}))
    return 0
