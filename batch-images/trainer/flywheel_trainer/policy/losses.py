"""The policy trainer's losses and metrics, as pure functions on tensors.

Alignment: every per-token tensor is indexed like ``input_ids``: position ``t`` holds ``log π(ids[t] | ids[<t])``
(position 0 has no prediction and holds 0), the same convention as the shards' ``behaviour_logprobs``. Every loss
term is normalised by its own token count (the tokens its mask selects in the batch), so weights compare terms, not
sequence lengths. Under FSDP each rank passes ``normaliser=rank_normaliser(global_count, world_size)`` instead, so the
mean of the ranks' gradients is the whole batch's. Masked positions are selected with ``torch.where``: a NaN there
never reaches the loss or its gradient.

    >>> logp = token_logprobs(model(ids).logits, ids)                      # [B, T]
    >>> adv = dr_grpo_advantages(rewards, group_ids)                       # [B]
    >>> loss = outcome_loss(logp, beh, adv, mask, cap=2.0) + decision_loss(logp, beh, teacher, span_mask, clip=5.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F


def _count(mask: torch.Tensor) -> torch.Tensor:
    # A term whose mask selects nothing contributes 0 (not NaN): divide by at least 1.
    return mask.sum().clamp(min=1)


def _norm(mask: torch.Tensor, normaliser: torch.Tensor | float | None) -> torch.Tensor | float:
    return _count(mask) if normaliser is None else normaliser


def _keep(values: torch.Tensor, selected: torch.Tensor) -> torch.Tensor:
    """``values`` where ``selected``, else 0: a NaN/inf at an unselected position cannot leak (``NaN · 0`` is NaN, and
    would be in the backward pass too, so the inputs are cleaned before they meet the current log-probs)."""
    return torch.where(selected, values, torch.zeros((), dtype=values.dtype, device=values.device))


def rank_normaliser(global_count: torch.Tensor | float, world_size: int) -> torch.Tensor | float:
    """The divisor of one rank's masked sum so that FSDP's gradient (the MEAN of the ranks' gradients) equals the
    single-process gradient of ``Σ_all / global_count``: ``global_count / world_size`` (at least 1/world_size, as
    ``_count`` divides by at least 1 when nothing is selected anywhere).

    @example loss = outcome_loss(logp, beh, adv, mask, cap, normaliser=rank_normaliser(all_reduced_count, 2))
    """
    if isinstance(global_count, torch.Tensor):
        return global_count.clamp(min=1) / world_size
    return max(float(global_count), 1.0) / world_size


def aligned_logprobs(logits: torch.Tensor) -> torch.Tensor:
    """Full log-softmax rows aligned with the ids: ``out[..., t, :]`` is the distribution of token ``t`` (row 0: zeros)."""
    lp = torch.log_softmax(logits.float(), dim=-1)
    return torch.cat([torch.zeros_like(lp[..., :1, :]), lp[..., :-1, :]], dim=-2)


def token_logprobs(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Log-prob of each id given the ids before it, aligned with ``ids`` ([..., T]; position 0 is 0).

    @example logp = token_logprobs(model(ids).logits, ids)
    """
    # Cross-entropy gathers without materialising a float32 copy of the whole log-softmax (large vocabularies).
    shifted = logits[..., :-1, :]
    targets = ids[..., 1:]
    lp = -F.cross_entropy(shifted.reshape(-1, shifted.shape[-1]).float(), targets.reshape(-1), reduction="none").view(targets.shape)
    return torch.cat([torch.zeros_like(lp[..., :1]), lp], dim=-1)


def dr_grpo_advantages(rewards: torch.Tensor, group_ids: Sequence[str] | torch.Tensor) -> torch.Tensor:
    """Dr. GRPO advantages: each reward minus its group's mean reward, with no division by the group's std.

    @example dr_grpo_advantages(torch.tensor([1., 0., 0., 1., 1.]), ["a", "a", "a", "b", "b"])  # [2/3, -1/3, -1/3, 0, 0]
    """
    rewards = rewards.float()
    keys = group_ids.tolist() if isinstance(group_ids, torch.Tensor) else list(group_ids)
    if len(keys) != rewards.shape[0]:
        raise ValueError(f"group_ids: {len(keys)} ids for {rewards.shape[0]} rewards")
    index = {key: n for n, key in enumerate(dict.fromkeys(keys))}
    groups = torch.tensor([index[k] for k in keys], dtype=torch.long)
    sums = torch.zeros(len(index)).index_add_(0, groups, rewards)
    counts = torch.zeros(len(index)).index_add_(0, groups, torch.ones_like(rewards))
    return rewards - (sums / counts)[groups]


def importance_weights(cur_logp: torch.Tensor, beh_logp: torch.Tensor, cap: float) -> torch.Tensor:
    """Truncated importance weights (TIS): ``min(exp(cur − beh), cap)``, detached (a correction, not a gradient path)."""
    return torch.exp(cur_logp.detach() - beh_logp).clamp(max=cap)


def outcome_loss(cur_logp: torch.Tensor, beh_logp: torch.Tensor, adv: torch.Tensor, mask: torch.Tensor, cap: float, normaliser: torch.Tensor | float | None = None) -> torch.Tensor:
    """The Dr. GRPO outcome term with truncated importance correction, normalised by the mask's token count.

    ``loss = −Σ_t mask·w_t·A·log π_θ(t) / Σ mask`` with ``w_t = min(π_θ/π_behaviour, cap)`` (detached) and ``A`` the
    sequence's advantage ([B], broadcast over its tokens). ``normaliser`` replaces ``Σ mask`` (several ranks:
    ``rank_normaliser``).

    @example outcome_loss(logp, batch.behaviour_logprobs, dr_grpo_advantages(r, g), batch.loss_mask, cap=2.0)
    """
    selected = mask > 0
    beh_logp = _keep(beh_logp, selected)
    w = importance_weights(cur_logp, beh_logp, cap)
    per_token = _keep(w * adv.to(cur_logp.dtype).unsqueeze(-1) * cur_logp, selected)
    return -per_token.sum() / _norm(mask, normaliser)


def decision_advantages(teacher_logp: torch.Tensor, beh_logp: torch.Tensor, clip: float) -> torch.Tensor:
    """``A_t = clip(log π_teacher − log π_behaviour, −clip, clip)`` per token (detached)."""
    return (teacher_logp.detach() - beh_logp).clamp(-clip, clip)


def decision_loss(cur_logp: torch.Tensor, beh_logp: torch.Tensor, teacher_logp: torch.Tensor, span_mask: torch.Tensor, clip: float, cap: float | None = None, normaliser: torch.Tensor | float | None = None) -> torch.Tensor:
    """The decision-point term: ``−Σ_span w_t·A_t·log π_θ(t) / Σ span`` on the span's tokens only.

    ``w_t`` is the truncated importance weight (``cap``; ``None``: 1). On-policy its expected gradient is the gradient
    of the reverse KL ``KL(π_θ ‖ π_teacher)`` at each span position (the sampled-token estimator).

    @example decision_loss(logp, beh, teacher_logprobs_with_hint(model, ids, (s, e), hint_ids), span_mask, clip=5.0)
    """
    selected = span_mask > 0
    beh_logp, teacher_logp = _keep(beh_logp, selected), _keep(teacher_logp, selected)
    adv = decision_advantages(teacher_logp, beh_logp, clip)
    w = importance_weights(cur_logp, beh_logp, cap) if cap is not None else torch.ones_like(cur_logp)
    return -_keep(w * adv * cur_logp, selected).sum() / _norm(span_mask, normaliser)


def teacher_choice_loss(cur_aligned_logprobs: torch.Tensor, teacher_aligned_logprobs: torch.Tensor, span_mask: torch.Tensor, normaliser: torch.Tensor | float | None = None) -> torch.Tensor:
    """Pulls up the teacher's own choice (its argmax token) at each span position (verified decisions only).

    Both inputs are aligned log-prob rows ([..., T, V], ``aligned_logprobs``); ``span_mask`` selects the verified
    decisions' span positions. ``loss = −Σ_span log π_θ(argmax π_teacher) / Σ span``.

    @example teacher_choice_loss(aligned_logprobs(logits), teacher_rows, verified_span_mask)
    """
    choice = teacher_aligned_logprobs.detach().argmax(dim=-1, keepdim=True)
    picked = cur_aligned_logprobs.gather(-1, choice).squeeze(-1)
    return -_keep(picked, span_mask > 0).sum() / _norm(span_mask, normaliser)


def insert_hint(ids: torch.Tensor, start: int, hint_ids: Sequence[int] | torch.Tensor) -> torch.Tensor:
    """``ids[:start] + hint_ids + ids[start:]`` (1-D): the teacher's input."""
    hint = torch.as_tensor(hint_ids, dtype=ids.dtype, device=ids.device)
    return torch.cat([ids[:start], hint, ids[start:]])


def slice_hint(values: torch.Tensor, start: int, hint_len: int) -> torch.Tensor:
    """Drops the hint's positions (``start .. start+hint_len``) from per-position values of the teacher's input, so
    they align with the student's ids again (along the first dimension)."""
    return torch.cat([values[:start], values[start + hint_len :]])


@torch.no_grad()
def teacher_forward(model: torch.nn.Module, requests: Sequence[tuple[torch.Tensor, tuple[int, int], Sequence[int] | torch.Tensor]], pad_id: int, rows: bool = False) -> list:
    """The teacher's log-probs for several ``(ids, span, hint_ids)`` at once: ONE padded prefill, each sequence with
    its hint inserted right before its span's first token; each result is sliced back to align with its ``ids``.

    Returns per request ``logp`` ([len(ids)]) or, with ``rows``, ``(logp, span_rows)`` where ``span_rows`` are the
    teacher's aligned log-prob rows of the span's positions (``[end − start, V]``).
    """
    fulls, hints = [], []
    for ids, (start, end), hint_ids in requests:
        if not 0 < start < end <= ids.shape[0]:
            raise ValueError(f"span: ({start}, {end}) is not inside 1..{ids.shape[0]} with start < end")
        hint = torch.as_tensor(hint_ids, dtype=torch.long, device=ids.device)
        fulls.append(insert_hint(ids, start, hint))
        hints.append(hint.shape[0])
    if not fulls:
        return []
    width = max(f.shape[0] for f in fulls)
    device = fulls[0].device
    batch = torch.full((len(fulls), width), pad_id, dtype=torch.long, device=device)
    attention = torch.zeros((len(fulls), width), dtype=torch.long, device=device)
    for i, f in enumerate(fulls):
        batch[i, : f.shape[0]] = f
        attention[i, : f.shape[0]] = 1
    logits = model(input_ids=batch, attention_mask=attention).logits
    out = []
    for i, ((ids, (start, end), _), h) in enumerate(zip(requests, hints)):
        n = fulls[i].shape[0]
        logp = slice_hint(token_logprobs(logits[i, :n], fulls[i]), start, h)
        if rows:
            # The aligned row of student position t ≥ start is the teacher's logits at t + h − 1.
            out.append((logp, torch.log_softmax(logits[i, start + h - 1 : end + h - 1].float(), dim=-1)))
        else:
            out.append(logp)
    return out


def teacher_logprobs_with_hint(model: torch.nn.Module, ids: torch.Tensor, span: tuple[int, int], hint_ids: Sequence[int] | torch.Tensor, return_rows: bool = False):
    """The teacher's log-probs of ``ids`` (1-D) from ONE prefill with ``hint_ids`` inserted right before ``span[0]``.

    The hint's positions are sliced off, so ``out[t]`` scores exactly ``ids[t]`` (``len(out) == len(ids)``); from
    ``span[0]`` on, the teacher has read the hint. With ``return_rows`` also the aligned full log-prob rows of the
    span's positions (``[end − start, V]``, for ``teacher_choice_loss`` and the span KL).

    @example teacher = teacher_logprobs_with_hint(model, row_ids, (12, 15), hint_token_ids(tokenizer, "tools: read"))
    """
    return teacher_forward(model, [(ids, span, hint_ids)], pad_id=0, rows=return_rows)[0]


def kl_rows(p_logprobs: torch.Tensor, q_logprobs: torch.Tensor) -> torch.Tensor:
    """``KL(p ‖ q)`` per row of log-prob rows ([..., V] → [...])."""
    return (p_logprobs.exp() * (p_logprobs - q_logprobs)).sum(-1)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean of ``values`` where ``mask`` is set (0.0 when nothing is)."""
    return float(_keep(values, mask > 0).sum() / _count(mask.to(values.dtype)))


def mismatch(cur_logp: torch.Tensor, beh_logp: torch.Tensor, mask: torch.Tensor) -> float:
    """Train–inference mismatch: mean |log π_trainer − log π_sampler| over the model's tokens."""
    return masked_mean((cur_logp.detach() - beh_logp).abs(), mask)
