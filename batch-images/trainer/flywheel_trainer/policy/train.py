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
    outcome_loss,
    rank_normaliser,
    decision_loss,
    teacher_choice_loss,
    teacher_forward,
    token_logprobs,
)
from .shards import Row, collate

STATE_FILE = "state.pt"
STATE_FORMAT = "flywheel.policy-state/1"
HELD_OUT_TOKENS = 256
REJECTED_ROWS = 32  # rows with spans the rejected-token probability is measured on, before and after (one forward)
RESUMABLE_CHANGES = frozenset({"steps", "saveEvery"})
"""The config fields a resumed run may change; any other differing from the saved state's is bad input."""


class TrainerConfigError(TrainingDataError):
    """``FLYWHEEL_TRAIN_CONFIG`` is not a TrainerConfig (bad input: exit 2); the message names the field."""


class NonFiniteLossError(TrainingDataError):
    """A step's loss is NaN or infinite: no optimiser step is taken and the job fails (exit 2: the run is
    deterministic, a retry would meet the same step)."""


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


def hint_token_ids(tokenizer, text: str, role: str = "user", system: str = "") -> list[int]:
    """The hint's ids as the teacher reads them: a ``role`` message rendered by the tokenizer's chat template
    (``<|user|>text<|end|>`` for the tiny tokenizer), inserted inside the assistant's turn right before the decision.

    The message is rendered after a ``system`` message and that rendering of ``[system]`` alone is cut off the front,
    so what a real template puts at the start of every conversation (BOS, a default system prompt, a date header) is
    not inside each hint: only the hint's own turn is.

    @example hint_token_ids(tokenizer, "The tools that exist: read_file, write_file.")
    """
    if getattr(tokenizer, "chat_template", None):
        head = [{"role": "system", "content": system}]
        try:
            prefix = tokenizer.apply_chat_template(head, tokenize=False)
            full = tokenizer.apply_chat_template(head + [{"role": role, "content": text}], tokenize=False)
        except Exception:  # noqa: BLE001 (a template without a system role: the message alone)
            prefix, full = "", tokenizer.apply_chat_template([{"role": role, "content": text}], tokenize=False)
        rendered = full[len(prefix) :] if full.startswith(prefix) else tokenizer.apply_chat_template([{"role": role, "content": text}], tokenize=False)
        return tokenizer.encode(rendered, add_special_tokens=False)
    return tokenizer.encode(f"\n{text}\n", add_special_tokens=False)


def held_out_split(rows: Sequence[Row], count: int = 2, minimum_rows: int = 10) -> tuple[list[Row], list[Row]]:
    """(train, held-out): with at least ``minimum_rows`` rows, the ``count`` span-free rows of smallest
    sha256(sample_id) are held out for the locality metric (a stable choice, whatever the shard order)."""
    if len(rows) < minimum_rows:
        return list(rows), []
    # Only rows with tokens can be measured (a text-only row of the builder has none).
    candidates = sorted((r for r in rows if not r.spans and r.input_ids), key=lambda r: hashlib.sha256(r.sample_id.encode()).hexdigest())[:count]
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


def with_lora(model: torch.nn.Module, config: "TrainerConfig") -> torch.nn.Module:
    """``model`` wrapped in the LoRA adapter ``config.lora`` asks for (every linear layer); one definition, so a model
    rebuilt to load a trained state (rank 0 after FSDP) has the same parameter names as the one trained."""
    from peft import LoraConfig, get_peft_model

    return get_peft_model(model, LoraConfig(r=config.lora["rank"], lora_alpha=config.lora["alpha"], lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"))


class PolicyTrainer:
    """One training run over ``rows``: ``step()`` takes one optimiser step; ``save_state`` / ``load_state`` resume.

    ``held_out`` rows are never trained on: the locality KL (current vs the initial model, off the spans) is measured
    on their model tokens. ``model`` may be wrapped already (FSDP2: ``distributed.py``); LoRA is applied here.

    @example PolicyTrainer(model, tok, rows, TrainerConfig(steps=4), held_out=rows[:2]).run(on_step=print)
    """

    def __init__(self, model: torch.nn.Module, tokenizer, rows: Sequence[Row], config: TrainerConfig, *, held_out: Sequence[Row] = (), world: World | None = None, device: str | torch.device = "cpu", wrap: Callable[[torch.nn.Module], torch.nn.Module] | None = None) -> None:
        # Rows without tokens (text-only rollouts as the builder writes them) only count in their group's mean reward.
        self.rows = [r for r in rows if r.input_ids]
        if not self.rows:
            raise TrainingDataError("dataset: no rows with tokens to train on")
        self.config = config
        self.tokenizer = tokenizer
        self.held_out = [r for r in held_out if r.input_ids]
        self.world = world or World()
        self.device = torch.device(device)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self._hint_cache: dict[str, list[int]] = {}
        vocab = model.get_input_embeddings().num_embeddings
        context = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        for r in self.rows + self.held_out:
            if max(r.input_ids) >= vocab or min(r.input_ids) < 0:
                raise TrainingDataError(f"input_ids: row {r.sample_id} has ids outside the model's vocabulary (0..{vocab - 1})")
            for s in r.spans:
                if not isinstance(s.hint, str):
                    raise TrainingDataError(f"span_hints: row {r.sample_id}: decision {s.decision_id}: hint is not a string ({s.hint!r})")
            longest = max((len(self._hint(s.hint)) for s in r.spans), default=0)
            if context and len(r.input_ids) + longest > context:
                raise TrainingDataError(f"input_ids: row {r.sample_id}: {len(r.input_ids)} tokens + a {longest}-token hint exceed the model's context ({context} positions)")
        # Advantages over each whole group in the dataset (a task's attempts in one run, text-only ones included), not
        # over the rows that happen to share a batch or a rank: the baseline is the group's mean reward.
        every = list(rows)
        advantages = dr_grpo_advantages(torch.tensor([r.reward for r in every], dtype=torch.float32), [r.group_id for r in every])
        self._advantage = {id(r): float(a) for r, a in zip(every, advantages)}
        set_seed(config.seed)
        if config.lora:
            model = with_lora(model, config)
        model.to(self.device)
        self._initial_held_out = self._held_out_rows(model) if self.held_out else None
        # The rejected-token probability is measured on the same rows before and after (a fixed choice).
        self.rejected_rows = [r for r in self.rows if r.spans][:REJECTED_ROWS]
        self.rejected_before: float | None = self._rejected_probability(model, self.rejected_rows)
        # The train–inference mismatch measured at the first step, before any update (kept in the state).
        self.initial_mismatch: float | None = None
        self.model = wrap(model) if wrap else model
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.learning_rate, betas=(0.9, 0.999), weight_decay=0.0)
        self.step_count = 0

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
        model.eval()
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
    def _rejected_probability(self, model: torch.nn.Module, rows: Sequence[Row]) -> float | None:
        if not rows:
            return None
        model.eval()
        batch = collate(rows, self.pad_id)
        with self._autocast():
            logits = model(input_ids=batch.input_ids.to(self.device), attention_mask=batch.attention_mask.to(self.device)).logits
        logp = token_logprobs(logits, batch.input_ids.to(self.device))
        firsts = [float(logp[i, s.start].exp()) for i, r in enumerate(rows) for s in r.spans]
        return sum(firsts) / len(firsts)

    def rejected_probability(self, rows: Sequence[Row] | None = None) -> float | None:
        """Mean probability of each span's first token as sampled (the rejected decision) under the current model,
        over ``rows`` (default: the fixed rows ``rejected_before`` was measured on, the first ``REJECTED_ROWS`` rows
        with spans). Collective under FSDP: every rank calls it with the same rows."""
        chosen = self.rejected_rows if rows is None else [r for r in rows if r.spans and r.input_ids][:REJECTED_ROWS]
        out = self._rejected_probability(self.model, chosen)
        self._reshard()
        return out

    # -- one step ---------------------------------------------------------------------------------------------
    def _all_reduce_sum(self, values: list[float]) -> list[float]:
        """Sums ``values`` over the ranks (one collective; alone: unchanged)."""
        if not self.world.distributed:
            return values
        import torch.distributed as dist

        packed = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(packed, op=dist.ReduceOp.SUM)
        return packed.tolist()

    def step(self) -> dict[str, Any]:
        """One optimiser step; returns the metrics line (``step`` counts completed steps, from 1).

        Several ranks: each term's local masked sum is divided by ``rank_normaliser`` (the all-reduced token count over
        the world size), so FSDP's mean of the ranks' gradients is the single-process gradient of the whole batch; the
        metrics are all-reduced, so every rank returns the whole batch's line. A non-finite loss raises
        ``NonFiniteLossError`` on every rank before any optimiser step.
        """
        started = time.perf_counter()
        cfg = self.config
        rows = self.batch_rows(self.step_count)
        batch = collate(rows, self.pad_id)
        dev = self.device
        ids, attention = batch.input_ids.to(dev), batch.attention_mask.to(dev)
        beh, pg_mask, span_mask = batch.behaviour_logprobs.to(dev), batch.pg_mask.to(dev), batch.span_mask.to(dev)

        # The teacher: the same model (current weights, no gradient, eval mode) with each span's hint, one padded
        # prefill for all spans. Every rank runs exactly one (an empty request list still prefills one pad row under FSDP).
        self.model.eval()
        requests, where = [], []
        for i, r in enumerate(rows):
            for s in r.spans:
                requests.append((ids[i, : len(r.input_ids)], (s.start, s.end), self._hint(s.hint)))
                where.append((i, s))
        if requests:
            with self._autocast():
                teacher_out = teacher_forward(self.model, requests, self.pad_id, rows=True)
        else:
            teacher_out = []
            if self.world.distributed:
                with torch.no_grad():
                    self.model(input_ids=torch.full((1, 2), self.pad_id, dtype=torch.long, device=dev))
        self._reshard()

        self.model.train()
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
        verified = torch.tensor(verified_flags, device=dev)

        # Each term's token count over the whole batch (all ranks): its normaliser.
        local_counts = [float(pg_mask.sum()), float(span_mask.sum()), float(verified.sum())]
        counts = self._all_reduce_sum(local_counts)
        ws = self.world.size
        norms = [rank_normaliser(c, ws) for c in counts] if self.world.distributed else [None, None, None]

        adv = torch.tensor([self._advantage[id(r)] for r in rows], device=dev)
        terms = {
            "outcome": outcome_loss(cur, beh, adv, pg_mask, cfg.importance_cap, normaliser=norms[0]),
            "decision": decision_loss(cur, beh_decision, teacher, span_mask, cfg.advantage_clip, cfg.importance_cap, normaliser=norms[1]),
        }
        if cur_rows:
            cur_span = torch.cat(cur_rows)
            teacher_span = torch.cat(teacher_rows)
            terms["teacherChoice"] = teacher_choice_loss(cur_span, teacher_span, verified, normaliser=norms[2])
            span_kls = kl_rows(cur_span.detach(), teacher_span)
            span_kl_sum, span_kl_n = float(span_kls.sum()), float(span_kls.numel())
        else:
            terms["teacherChoice"] = logits.sum() * 0.0
            span_kl_sum, span_kl_n = 0.0, 0.0
        weights = {"outcome": cfg.outcome_weight, "decision": cfg.decision_weight, "teacherChoice": cfg.teacher_choice_weight}
        loss = sum(weights[k] * v for k, v in terms.items())

        rejected = [float(cur[i, s.start].detach().exp()) for i, s in where]
        gap = (cur.detach() - beh).abs()
        gap_sum = float(torch.where(pg_mask > 0, gap, torch.zeros_like(gap)).sum())
        # One collective for every metric: the terms (each rank's share of the mean), sums and counts.
        keys = ["loss", "outcome", "decision", "teacherChoice", "gapSum", "gapN", "klSum", "klN", "rejSum", "rejN", "tokens", "modelTokens", "pgTokens", "rows", "spans"]
        local = [float(loss.detach()), *(float(terms[k].detach()) for k in ("outcome", "decision", "teacherChoice")), gap_sum, local_counts[0], span_kl_sum, span_kl_n, sum(rejected), float(len(rejected)), float(batch.attention_mask.sum()), float(batch.loss_mask.sum()), local_counts[0], float(len(rows)), float(len(where))]
        total = dict(zip(keys, self._all_reduce_sum(local)))
        for k in ("loss", "outcome", "decision", "teacherChoice"):
            total[k] /= ws  # each rank's value is its share times the world size

        if not math.isfinite(total["loss"]):
            # No update from a NaN/inf (it would poison every weight); every rank sees the same reduced value.
            self.optimizer.zero_grad(set_to_none=True)
            terms_text = ", ".join(f"{k}={total[k]}" for k in ("outcome", "decision", "teacherChoice"))
            raise NonFiniteLossError(f"step {self.step_count + 1}: the loss is not finite ({terms_text}); no optimiser step taken")

        # No sampler log-probs in the batch (text-only rows): nothing to compare.
        off_policy_gap = total["gapSum"] / total["gapN"] if total["gapN"] else None
        if self.step_count == 0 and self.initial_mismatch is None:
            self.initial_mismatch = off_policy_gap

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step_count += 1

        metrics: dict[str, Any] = {
            "step": self.step_count,
            "at": _now(),
            "loss": total["loss"],
            "tokens": int(total["tokens"]),
            "stepSeconds": round(time.perf_counter() - started, 6),
            "outcome": total["outcome"],
            "decision": total["decision"],
            "teacherChoice": total["teacherChoice"],
            # `mismatch`: trainer vs sampler on the same weights (the first step, before any update); `offPolicyGap`:
            # this step's |log π_trainer − log π_behaviour|, which also holds how far training has moved the policy.
            "mismatch": self.initial_mismatch,
            "offPolicyGap": off_policy_gap,
            "rows": int(total["rows"]),
            "spans": int(total["spans"]),
            "modelTokens": int(total["modelTokens"]),
            "pgTokens": int(total["pgTokens"]),
        }
        if total["klN"]:
            metrics["spanKl"] = total["klSum"] / total["klN"]
        if total["rejN"]:
            metrics["rejectedProb"] = total["rejSum"] / total["rejN"]
        locality = self.locality_kl()
        if locality is not None:
            metrics["localityKl"] = locality
        if self.world.distributed:
            metrics["worldSize"] = self.world.size
        for key, value in list(metrics.items()):
            if isinstance(value, float) and not math.isfinite(value):
                metrics[key] = None
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
            "initialMismatch": self.initial_mismatch,
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
        # Tensors, numbers, strings, lists, tuples and dicts only (the RNG states included): the safe unpickler reads it.
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as error:  # noqa: BLE001 (pickle errors of every kind: not a state this trainer wrote)
            raise TrainingDataError(f"state: unreadable ({type(error).__name__}: {error})") from error
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise TrainingDataError(f"state: format: expected {STATE_FORMAT!r}")
        saved = state.get("config") or {}
        now = self.config.to_json()
        for key in sorted(set(saved) | set(now)):
            # A run may be resumed to more steps, or save more or less often; anything else changes what it trains.
            if key not in RESUMABLE_CHANGES and saved.get(key) != now.get(key):
                raise TrainingDataError(f"state: config.{key}: the state was saved with {saved.get(key)!r}, this run has {now.get(key)!r}")
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
        self.initial_mismatch = state.get("initialMismatch")

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


__all__ = ["NonFiniteLossError", "PolicyTrainer", "TrainerConfig", "TrainerConfigError", "World", "hint_token_ids", "held_out_split", "train"]
