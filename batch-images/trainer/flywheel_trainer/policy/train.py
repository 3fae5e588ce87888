"""The policy training loop: AdamW on the weighted sum of the outcome, decision-point and teacher-choice terms.

Deterministic: the data order of step ``k`` is a function of (seed, k) alone (one permutation of the rows per
epoch), so a state saved after step ``k`` (weights, optimiser, RNG states, step) resumes into exactly the step an
uninterrupted run would take next, bit for bit on CPU.

    >>> trainer = PolicyTrainer(model, tokenizer, rows, TrainerConfig.from_json({"steps": 20}))
    >>> summary = trainer.run(on_step=print)
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from ..reward_model import TrainingDataError
from .losses import (
    dr_grpo_advantages,
    kl_rows,
    mismatch,
    outcome_loss,
    decision_loss,
    teacher_choice_loss,
    teacher_forward,
    token_logprobs,
)
from .shards import Row, collate

STATE_FILE = "state.pt"
STATE_FORMAT = "flywheel.policy-state/1"
HELD_OUT_TOKENS = 256
REJECTED_ROWS = 32  # rows with spans the final rejected-token probability is measured on (one forward)


class TrainerConfigError(TrainingDataError):
    """``FLYWHEEL_TRAIN_CONFIG`` is not a TrainerConfig (bad input: exit 2); the message names the field."""


# TrainerConfigSchema (lib/training/schemas.ts): camelCase JSON name → (attribute, type, default).
_FIELDS: dict[str, tuple[str, type, Any]] = {
    "steps": ("steps", int, 20),
    "learningRate": ("learning_rate", float, 1e-4),
    "batchSize": ("batch_size", int, 8),
    "outcomeWeight": ("outcome_weight", float, 1.0),
    "decisionWeight": ("decision_weight", float, 1.0),
    "teacherChoiceWeight": ("teacher_choice_weight", float, 0.0),
    "importanceCap": ("importance_cap", float, 2.0),
    "advantageClip": ("advantage_clip", float, 5.0),
    "lora": ("lora", dict, None),
    "seed": ("seed", int, 0),
    "saveEvery": ("save_every", int, 10),
    "gpus": ("gpus", int, 1),
    "nodes": ("nodes", int, 1),
}


@dataclass(frozen=True)
class TrainerConfig:
    """The trainer's settings: ``TrainerConfigSchema`` with snake_case attributes (``from_json`` reads camelCase)."""

    steps: int = 20
    learning_rate: float = 1e-4
    batch_size: int = 8
    outcome_weight: float = 1.0
    decision_weight: float = 1.0
    teacher_choice_weight: float = 0.0
    importance_cap: float = 2.0
    advantage_clip: float = 5.0
    lora: dict | None = None
    seed: int = 0
    save_every: int = 10
    gpus: int = 1
    nodes: int = 1

    @classmethod
    def from_json(cls, value: dict[str, Any] | None) -> "TrainerConfig":
        """@example TrainerConfig.from_json({"steps": 4, "learningRate": 0.01, "lora": {"rank": 4}})"""
        value = value or {}
        if not isinstance(value, dict):
            raise TrainerConfigError("config: expected a JSON object")
        kwargs: dict[str, Any] = {}
        for key, raw in value.items():
            if key not in _FIELDS:
                raise TrainerConfigError(f"config.{key}: unknown field")
            attr, kind, _ = _FIELDS[key]
            if raw is None:
                continue
            if kind is dict:
                if not isinstance(raw, dict) or set(raw) - {"rank", "alpha"}:
                    raise TrainerConfigError(f"config.{key}: expected {{rank, alpha}}")
                kwargs[attr] = {"rank": int(raw.get("rank", 8)), "alpha": float(raw.get("alpha", 16))}
            elif isinstance(raw, bool) or not isinstance(raw, (int, float)) or (kind is int and not float(raw).is_integer()):
                raise TrainerConfigError(f"config.{key}: expected {'an integer' if kind is int else 'a number'}, got {raw!r}")
            else:
                kwargs[attr] = kind(raw)
        config = cls(**kwargs)
        for attr, low in (("steps", 1), ("batch_size", 1), ("save_every", 1), ("importance_cap", 1)):
            if getattr(config, attr) < low:
                raise TrainerConfigError(f"config.{_camel(attr)}: at least {low}")
        if config.learning_rate <= 0 or config.advantage_clip <= 0:
            raise TrainerConfigError("config.learningRate / advantageClip: must be positive")
        return config

    def to_json(self) -> dict[str, Any]:
        return {_camel(f.name): getattr(self, f.name) for f in dataclasses.fields(self)}


def _camel(attr: str) -> str:
    return next(k for k, v in _FIELDS.items() if v[0] == attr)


def hint_token_ids(tokenizer, text: str, role: str = "user") -> list[int]:
    """The hint's ids as the teacher reads them: a ``role`` message rendered by the tokenizer's chat template
    (``<|user|>text<|end|>`` for the tiny tokenizer), inserted inside the assistant's turn right before the decision.

    @example hint_token_ids(tokenizer, "The tools that exist: read_file, write_file.")
    """
    if getattr(tokenizer, "chat_template", None):
        rendered = tokenizer.apply_chat_template([{"role": role, "content": text}], tokenize=False)
        return tokenizer.encode(rendered, add_special_tokens=False)
    return tokenizer.encode(f"\n{text}\n", add_special_tokens=False)


def held_out_split(rows: Sequence[Row], count: int = 2, minimum_rows: int = 10) -> tuple[list[Row], list[Row]]:
    """(train, held-out): with at least ``minimum_rows`` rows, the ``count`` span-free rows of smallest
    sha256(sample_id) are held out for the locality metric (a stable choice, whatever the shard order)."""
    if len(rows) < minimum_rows:
        return list(rows), []
    candidates = sorted((r for r in rows if not r.spans), key=lambda r: hashlib.sha256(r.sample_id.encode()).hexdigest())[:count]
    chosen = {id(r) for r in candidates}
    return [r for r in rows if id(r) not in chosen], candidates


@dataclass
class World:
    """The process group this trainer is one rank of (``rank 0 of 1`` alone)."""

    rank: int = 0
    size: int = 1

    @property
    def distributed(self) -> bool:
        return self.size > 1


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:  # numpy is optional here
        pass


class PolicyTrainer:
    """One training run over ``rows``: ``step()`` takes one optimiser step; ``save_state`` / ``load_state`` resume.

    ``held_out`` rows are never trained on: the locality KL (current vs the initial model, off the spans) is measured
    on their model tokens. ``model`` may be wrapped already (FSDP2: ``distributed.py``); LoRA is applied here.

    @example PolicyTrainer(model, tok, rows, TrainerConfig(steps=4), held_out=rows[:2]).run(on_step=print)
    """

    def __init__(self, model: torch.nn.Module, tokenizer, rows: Sequence[Row], config: TrainerConfig, *, held_out: Sequence[Row] = (), world: World | None = None, device: str | torch.device = "cpu", wrap: Callable[[torch.nn.Module], torch.nn.Module] | None = None) -> None:
        if not rows:
            raise TrainingDataError("dataset: no rows to train on")
        self.config = config
        self.tokenizer = tokenizer
        self.rows = list(rows)
        self.held_out = list(held_out)
        self.world = world or World()
        self.device = torch.device(device)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        vocab = model.get_input_embeddings().num_embeddings
        for r in self.rows + self.held_out:
            if max(r.input_ids) >= vocab or min(r.input_ids) < 0:
                raise TrainingDataError(f"input_ids: row {r.sample_id} has ids outside the model's vocabulary (0..{vocab - 1})")
        # Advantages over each whole group in the dataset (a task's attempts in one run), not over the rows that happen
        # to share a batch or a rank: the baseline is the group's mean reward.
        advantages = dr_grpo_advantages(torch.tensor([r.reward for r in self.rows]), [r.group_id for r in self.rows])
        self._advantage = {id(r): float(a) for r, a in zip(self.rows, advantages)}
        set_seed(config.seed)
        if config.lora:
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(r=config.lora["rank"], lora_alpha=config.lora["alpha"], lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"))
        model.to(self.device)
        self._initial_held_out = self._held_out_rows(model) if self.held_out else None
        self.model = wrap(model) if wrap else model
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.learning_rate, betas=(0.9, 0.999), weight_decay=0.0)
        self.step_count = 0
        self._hint_cache: dict[str, list[int]] = {}
        self.rejected_before: float | None = None

    # -- data order -------------------------------------------------------------------------------------------
    def batch_rows(self, step: int) -> list[Row]:
        """This rank's rows of step ``step``: a function of (seed, step) alone."""
        n = len(self.rows)
        size = max(self.config.batch_size, self.world.size)
        indexes = []
        for position in range(step * size, (step + 1) * size):
            epoch, offset = divmod(position, n)
            order = torch.randperm(n, generator=torch.Generator().manual_seed(self.config.seed * 1_000_003 + epoch))
            indexes.append(int(order[offset]))
        return [self.rows[i] for i in indexes[self.world.rank :: self.world.size]]

    def _hint(self, text: str) -> list[int]:
        if text not in self._hint_cache:
            self._hint_cache[text] = hint_token_ids(self.tokenizer, text)
        return self._hint_cache[text]

    def _autocast(self):
        """bf16 autocast on GPUs (weights and optimiser stay float32); exact float32 on CPU."""
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda")

    def _reshard(self) -> None:
        """FSDP2 leaves the root's parameters gathered after a forward without backward (the teacher's, the metrics'):
        shard them again, or the optimiser's parameters and the model's differ (state dicts fail)."""
        if self.world.distributed:
            try:
                from torch.distributed.fsdp import FSDPModule
            except ImportError:  # torch < 2.6
                from torch.distributed._composable.fsdp import FSDPModule

            for module in self.model.modules():
                if isinstance(module, FSDPModule):
                    module.reshard()

    # -- metrics helpers --------------------------------------------------------------------------------------
    @torch.no_grad()
    def _held_out_rows(self, model: torch.nn.Module) -> list[torch.Tensor]:
        """Aligned log-prob rows of each held-out row's model tokens ([n_i, V])."""
        batch = collate(self.held_out, self.pad_id)
        logits = model(input_ids=batch.input_ids.to(self.device), attention_mask=batch.attention_mask.to(self.device)).logits
        out = []
        for i, r in enumerate(self.held_out):
            # At most HELD_OUT_TOKENS per row: the initial rows are kept in memory ([n, vocabulary] floats).
            positions = [t for t in range(1, len(r.input_ids)) if r.loss_mask[t]][:HELD_OUT_TOKENS]
            rows = torch.log_softmax(logits[i, [t - 1 for t in positions]].float(), -1) if positions else logits.new_zeros((0, logits.shape[-1]))
            out.append(rows)
        return out

    def locality_kl(self) -> float | None:
        """Mean KL(current ‖ initial) over the held-out rows' model tokens (None without held-out rows)."""
        if self._initial_held_out is None:
            return None
        current = self._held_out_rows(self.model)
        self._reshard()
        kls = torch.cat([kl_rows(c, i) for c, i in zip(current, self._initial_held_out)])
        return float(kls.mean()) if kls.numel() else 0.0

    @torch.no_grad()
    def rejected_probability(self, rows: Sequence[Row] | None = None) -> float | None:
        """Mean probability of each span's first token as sampled (the rejected decision) under the current model
        (over the first ``REJECTED_ROWS`` rows with spans)."""
        rows = [r for r in (rows if rows is not None else self.rows) if r.spans][:REJECTED_ROWS]
        if not rows:
            return None
        batch = collate(rows, self.pad_id)
        logp = token_logprobs(self.model(input_ids=batch.input_ids.to(self.device), attention_mask=batch.attention_mask.to(self.device)).logits, batch.input_ids.to(self.device))
        self._reshard()
        firsts = [float(logp[i, s.start].exp()) for i, r in enumerate(rows) for s in r.spans]
        return sum(firsts) / len(firsts)

    # -- one step ---------------------------------------------------------------------------------------------
    def step(self) -> dict[str, Any]:
        """One optimiser step; returns the metrics line (``step`` counts completed steps, from 1)."""
        started = time.perf_counter()
        cfg = self.config
        rows = self.batch_rows(self.step_count)
        batch = collate(rows, self.pad_id)
        dev = self.device
        ids, attention = batch.input_ids.to(dev), batch.attention_mask.to(dev)
        beh, pg_mask, span_mask = batch.behaviour_logprobs.to(dev), batch.pg_mask.to(dev), batch.span_mask.to(dev)
        self.model.train()

        # The teacher: the same model (current weights, no gradient) with each span's hint, one padded prefill for
        # all spans. Every rank runs exactly one (an empty request list still prefills one pad row under FSDP).
        requests, where = [], []
        for i, r in enumerate(rows):
            for s in r.spans:
                requests.append((ids[i, : len(r.input_ids)], (s.start, s.end), self._hint(s.hint)))
                where.append((i, s))
        need_rows = True
        if requests:
            with self._autocast():
                teacher_out = teacher_forward(self.model, requests, self.pad_id, rows=need_rows)
        else:
            teacher_out = []
            if self.world.distributed:
                with torch.no_grad():
                    self.model(input_ids=torch.full((1, 2), self.pad_id, dtype=torch.long, device=dev))
        self._reshard()

        with self._autocast():
            logits = self.model(input_ids=ids, attention_mask=attention).logits
        cur = token_logprobs(logits, ids)

        # Decision term: behaviour log-probs where the sampler's are known, else the current policy's (on-policy).
        has_ids = batch.has_token_ids.to(dev).unsqueeze(-1)
        beh_decision = torch.where(has_ids, beh, cur.detach())
        teacher = beh_decision.clone()
        teacher_rows, cur_rows, verified_flags = [], [], []
        for (i, s), (t_logp, t_rows) in zip(where, teacher_out):
            teacher[i, s.start : s.end] = t_logp[s.start : s.end]
            teacher_rows.append(t_rows)
            cur_rows.append(torch.log_softmax(logits[i, s.start - 1 : s.end - 1].float(), -1))
            verified_flags.extend([1.0 if s.verified else 0.0] * (s.end - s.start))

        adv = torch.tensor([self._advantage[id(r)] for r in rows], device=dev)
        terms = {
            "outcome": outcome_loss(cur, beh, adv, pg_mask, cfg.importance_cap),
            "decision": decision_loss(cur, beh_decision, teacher, span_mask, cfg.advantage_clip, cfg.importance_cap),
        }
        if cur_rows:
            cur_span = torch.cat(cur_rows)
            teacher_span = torch.cat(teacher_rows)
            verified = torch.tensor(verified_flags, device=dev)
            terms["teacherChoice"] = teacher_choice_loss(cur_span, teacher_span, verified)
            span_kl = float(kl_rows(cur_span.detach(), teacher_span).mean())
        else:
            terms["teacherChoice"] = (logits.sum() * 0.0)
            span_kl = None
        weights = {"outcome": cfg.outcome_weight, "decision": cfg.decision_weight, "teacherChoice": cfg.teacher_choice_weight}
        loss = sum(weights[k] * v for k, v in terms.items())

        rejected = [float(cur[i, s.start].detach().exp()) for i, s in where]
        rejected_prob = sum(rejected) / len(rejected) if rejected else None
        if self.rejected_before is None and rejected_prob is not None and self.step_count == 0:
            self.rejected_before = rejected_prob

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step_count += 1

        metrics: dict[str, Any] = {
            "step": self.step_count,
            "at": _now(),
            "loss": float(loss.detach()),
            "tokens": int(batch.attention_mask.sum()),
            "stepSeconds": round(time.perf_counter() - started, 6),
            "outcome": float(terms["outcome"].detach()),
            "decision": float(terms["decision"].detach()),
            "teacherChoice": float(terms["teacherChoice"].detach()),
            "mismatch": mismatch(cur, beh, pg_mask),
            "rows": len(rows),
            "spans": len(where),
            "modelTokens": int(batch.loss_mask.sum()),
            "pgTokens": int(batch.pg_mask.sum()),
        }
        if span_kl is not None:
            metrics["spanKl"] = span_kl
        if rejected_prob is not None:
            metrics["rejectedProb"] = rejected_prob
        locality = self.locality_kl()
        if locality is not None:
            metrics["localityKl"] = locality
        if self.world.distributed:
            metrics["worldSize"] = self.world.size
        for key, value in list(metrics.items()):
            if isinstance(value, float) and not math.isfinite(value):
                metrics[key] = None if key != "loss" else value
        return metrics

    # -- state ------------------------------------------------------------------------------------------------
    def _model_state(self) -> dict[str, torch.Tensor]:
        if self.world.distributed:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

            return get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    def state_dict(self) -> dict[str, Any]:
        """Everything the next step depends on: weights, optimiser, RNG states, step, data order (seed)."""
        if self.world.distributed:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

            optim = get_optimizer_state_dict(self.model, self.optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        else:
            optim = self.optimizer.state_dict()
        rng: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
        if torch.cuda.is_available():
            rng["cuda"] = torch.cuda.get_rng_state_all()
        return {
            "format": STATE_FORMAT,
            "step": self.step_count,
            "config": self.config.to_json(),
            "dataOrder": {"seed": self.config.seed, "rows": [r.sample_id for r in self.rows]},
            "model": self._model_state(),
            "optimizer": optim,
            "rng": rng,
            "rejectedBefore": self.rejected_before,
        }

    def save_state(self, path: str | os.PathLike[str]) -> None:
        """Writes the state file (rank 0 writes; every rank must call it under FSDP: gathering is collective)."""
        state = self.state_dict()
        if self.world.rank == 0:
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.tmp")
            torch.save(state, tmp)
            tmp.replace(target)

    def load_state(self, path: str | os.PathLike[str]) -> None:
        """Resumes from a state file: the next ``step()`` is the one the saved run would have taken."""
        state = torch.load(path, map_location="cpu", weights_only=False)
        if state.get("format") != STATE_FORMAT:
            raise TrainingDataError(f"state: format: expected {STATE_FORMAT!r}")
        if state["dataOrder"]["rows"] != [r.sample_id for r in self.rows] or state["dataOrder"]["seed"] != self.config.seed:
            raise TrainingDataError("state: dataOrder: the state was saved for other rows or another seed")
        if self.world.distributed:
            from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict, set_optimizer_state_dict

            options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=False)
            set_model_state_dict(self.model, state["model"], options=options)
            set_optimizer_state_dict(self.model, self.optimizer, state["optimizer"], options=options)
        else:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"]["torch"])
        random.setstate(state["rng"]["python"])
        if "cuda" in state["rng"] and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["rng"]["cuda"])
        self.step_count = int(state["step"])
        self.rejected_before = state.get("rejectedBefore")

    def plain_model(self) -> torch.nn.Module:
        """The trained model to save (LoRA merged by ``save_checkpoint``; unwrapped of FSDP by ``distributed``)."""
        return self.model

    # -- the loop ---------------------------------------------------------------------------------------------
    def run(self, on_step: Callable[[dict[str, Any]], None] | None = None, on_save: Callable[["PolicyTrainer"], None] | None = None) -> dict[str, Any]:
        """Steps until ``config.steps``; ``on_step(metrics)`` after each, ``on_save(self)`` every ``saveEvery`` steps.
        Returns a summary (last metrics, rejected-token probability before and after)."""
        logger = _wandb(self.config) if self.world.rank == 0 else None
        last: dict[str, Any] = {}
        while self.step_count < self.config.steps:
            last = self.step()
            if on_step:
                on_step(last)
            if logger:
                logger.log({k: v for k, v in last.items() if isinstance(v, (int, float)) and v is not None}, step=last["step"])
            if on_save and self.step_count % self.config.save_every == 0 and self.step_count < self.config.steps:
                on_save(self)
        if logger:
            logger.finish()
        return {"steps": self.step_count, "last": last, "rejectedProbBefore": self.rejected_before, "rejectedProbAfter": self.rejected_probability()}


def _wandb(config: TrainerConfig):
    """W&B run when ``WANDB_API_KEY`` is set and wandb is installed (never required)."""
    if not os.environ.get("WANDB_API_KEY"):
        return None
    try:
        import wandb
    except ImportError:
        return None
    return wandb.init(project=os.environ.get("WANDB_PROJECT", "flywheel"), name=os.environ.get("FLYWHEEL_TRAIN_RUN_ID"), config=config.to_json())


def train(model: torch.nn.Module, tokenizer, rows: Sequence[Row], config: TrainerConfig, *, held_out: Sequence[Row] = (), on_step: Callable[[dict[str, Any]], None] | None = None) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Trains ``model`` on ``rows`` for ``config.steps`` steps in this process; returns (trained model, summary).

    @example model, summary = train(*build_tiny_model(0), rows, TrainerConfig(steps=10, decision_weight=1.0), on_step=print)
    """
    trainer = PolicyTrainer(model, tokenizer, rows, config, held_out=held_out)
    summary = trainer.run(on_step=on_step)
    return trainer.model, summary


__all__ = ["PolicyTrainer", "TrainerConfig", "TrainerConfigError", "World", "hint_token_ids", "held_out_split", "train"]
