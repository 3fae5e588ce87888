"""The loss maths: advantages, masks, per-term normalisation, importance truncation, the sampled-token estimator and
the teacher's hint alignment."""

import math

import pytest
import torch

from flywheel_trainer.policy.losses import (
    aligned_logprobs,
    decision_loss,
    dr_grpo_advantages,
    kl_rows,
    outcome_loss,
    rank_normaliser,
    teacher_choice_loss,
    teacher_logprobs_with_hint,
    token_logprobs,
)
from flywheel_trainer.policy.tiny import build_tiny_model


def test_token_logprobs_align_with_ids():
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 7)
    ids = torch.randint(0, 7, (2, 5))
    lp = token_logprobs(logits, ids)
    assert lp.shape == ids.shape and torch.all(lp[:, 0] == 0)
    assert torch.allclose(lp[1, 3], torch.log_softmax(logits[1, 2], -1)[ids[1, 3]])
    rows = aligned_logprobs(logits)
    assert torch.allclose(rows.gather(-1, ids.unsqueeze(-1)).squeeze(-1)[:, 1:], lp[:, 1:])


def test_dr_grpo_advantages_subtract_the_group_mean_without_std():
    adv = dr_grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.5]), ["a", "a", "a", "b", "b", "c"])
    assert torch.allclose(adv, torch.tensor([2 / 3, -1 / 3, -1 / 3, 0.0, 0.0, 0.0]))
    # No std division: scaling rewards scales advantages (GRPO's std would cancel it).
    scaled = dr_grpo_advantages(torch.tensor([10.0, 0.0, 0.0, 10.0, 10.0, 5.0]), ["a", "a", "a", "b", "b", "c"])
    assert torch.allclose(scaled, adv * 10)
    with pytest.raises(ValueError, match="group_ids"):
        dr_grpo_advantages(torch.tensor([1.0]), ["a", "b"])


def test_masked_tokens_contribute_nothing():
    cur = torch.randn(2, 6, requires_grad=True)
    beh = cur.detach().clone()
    mask = torch.tensor([[0, 1, 1, 0, 0, 1], [0, 0, 1, 1, 0, 0]])  # 0: prompt and tool output
    adv = torch.tensor([1.0, -0.5])
    loss = outcome_loss(cur, beh, adv, mask, cap=2.0)
    loss.backward()
    assert torch.all(cur.grad[mask == 0] == 0) and torch.all(cur.grad[mask == 1] != 0)
    # Changing tool tokens' log-probs changes nothing.
    other = cur.detach().clone()
    other[mask == 0] += 3.0
    assert math.isclose(float(outcome_loss(other, beh, adv, mask, 2.0)), float(loss.detach()), rel_tol=1e-6)
    # Span term: positions off the span get no gradient.
    cur.grad = None
    span = torch.zeros_like(mask)
    span[0, 2] = 1
    decision_loss(cur, beh, beh + 1.0, span, clip=5.0).backward()
    assert cur.grad[0, 2] != 0 and int((cur.grad != 0).sum()) == 1


def test_each_term_is_normalised_by_its_own_token_count():
    # Constant log-prob c, advantage 1, on-policy: the loss is −c whatever the number of masked tokens.
    c = -1.5
    for mask in (torch.tensor([[1, 0, 0, 0]]), torch.tensor([[1, 1, 1, 1]]), torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]])):
        cur = torch.full(mask.shape, c)
        assert math.isclose(float(outcome_loss(cur, cur, torch.ones(mask.shape[0]), mask, 2.0)), -c, rel_tol=1e-6)
        # Decision term: A = 1 everywhere; normalised by the span's own count, not by the outcome mask's.
        assert math.isclose(float(decision_loss(cur, cur, cur + 1.0, mask, clip=5.0)), -c, rel_tol=1e-6)
    # An empty mask gives 0, not NaN.
    assert float(outcome_loss(torch.ones(1, 3), torch.ones(1, 3), torch.ones(1), torch.zeros(1, 3), 2.0)) == 0.0


def test_nan_at_masked_positions_does_not_leak_into_loss_or_gradient():
    cur = torch.randn(2, 5, requires_grad=True)
    mask = torch.tensor([[0, 1, 1, 0, 1], [0, 0, 1, 1, 0]])
    beh = cur.detach().clone()
    beh[mask == 0] = float("nan")
    teacher = beh + 0.5
    teacher[0, 0] = float("inf")
    adv = torch.tensor([1.0, -1.0])
    loss = outcome_loss(cur, beh, adv, mask, 2.0) + decision_loss(cur, beh, teacher, mask, clip=5.0, cap=2.0)
    loss.backward()
    assert math.isfinite(float(loss.detach())) and torch.isfinite(cur.grad).all()
    assert torch.all(cur.grad[mask == 0] == 0)
    rows = torch.log_softmax(torch.randn(4, 6), -1)
    bad = rows.clone()
    bad[0] = float("nan")  # a position off the verified spans
    assert math.isfinite(float(teacher_choice_loss(bad, rows, torch.tensor([0, 1, 1, 0]))))


def test_rank_normaliser_makes_the_mean_of_rank_gradients_the_single_process_gradient():
    # Two ranks of FSDP: each rank's gradient of (local masked sum / rank_normaliser), averaged, equals the gradient of
    # the whole batch's loss in one process — with unequal token counts per rank, where a per-rank mean would not.
    torch.manual_seed(0)
    cur = torch.randn(4, 6, requires_grad=True)
    beh = cur.detach() + 0.1 * torch.randn(4, 6)
    teacher = beh + torch.randn(4, 6)
    mask = torch.tensor([[0, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 0], [0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0]])
    adv = torch.tensor([1.0, -0.5, 0.25, 2.0])

    def terms(part, normaliser=None):
        return outcome_loss(cur[part], beh[part], adv[part], mask[part], 2.0, normaliser=normaliser) + decision_loss(cur[part], beh[part], teacher[part], mask[part], 5.0, 2.0, normaliser=normaliser)

    (single,) = torch.autograd.grad(terms(slice(0, 4)), cur)
    halves = (slice(0, 2), slice(2, 4))
    fsdp = sum(torch.autograd.grad(terms(h, rank_normaliser(mask.sum(), 2)), cur)[0] for h in halves) / 2
    assert torch.allclose(fsdp, single, atol=1e-6)
    # Per-rank means (the bug this guards against) differ.
    naive = sum(torch.autograd.grad(terms(h), cur)[0] for h in halves) / 2
    assert not torch.allclose(naive, single, atol=1e-4)
    assert rank_normaliser(0.0, 2) == 0.5 and float(rank_normaliser(torch.tensor(6.0), 2)) == 3.0


def test_importance_weights_are_truncated_and_detached():
    beh = torch.log(torch.tensor([[0.1, 0.1, 0.1]]))
    cur = torch.log(torch.tensor([[0.5, 0.15, 0.05]])).requires_grad_(True)  # ratios 5, 1.5, 0.5
    mask = torch.ones(1, 3)
    outcome_loss(cur, beh, torch.ones(1), mask, cap=2.0).backward()
    # d/dcur of −w·A·cur/3 with w detached: −w/3, w = min(ratio, 2).
    assert torch.allclose(cur.grad, -torch.tensor([[2.0, 1.5, 0.5]]) / 3)
    # The decision term takes the same cap when given one, and clips its advantage.
    cur.grad = None
    teacher = beh + torch.tensor([[10.0, -10.0, 0.2]])
    decision_loss(cur, beh, teacher, mask, clip=5.0, cap=2.0).backward()
    assert torch.allclose(cur.grad, -torch.tensor([[2.0 * 5.0, 1.5 * -5.0, 0.5 * 0.2]]) / 3, atol=1e-6)


def test_sampled_token_estimator_matches_the_reverse_kl_gradient():
    # One position, exact enumeration: E_{y~π}[∇ decision_loss(y)] (on-policy, no clipping) = ∇ KL(π ‖ π_T).
    torch.manual_seed(3)
    z = torch.randn(6, requires_grad=True)
    teacher = torch.log_softmax(torch.randn(6), -1)
    probs = torch.softmax(z, -1).detach()
    expected = torch.zeros(6)
    for y in range(6):
        logp = torch.log_softmax(z, -1)[y].view(1, 1)
        loss = decision_loss(logp, logp.detach(), teacher[y].view(1, 1), torch.ones(1, 1), clip=1e9)
        (grad,) = torch.autograd.grad(loss, z)
        expected += probs[y] * grad
    kl = kl_rows(torch.log_softmax(z, -1), teacher)
    (analytic,) = torch.autograd.grad(kl, z)
    assert torch.allclose(expected, analytic, atol=1e-6)
    assert analytic.abs().sum() > 1e-3


def test_teacher_choice_pulls_up_the_teachers_argmax():
    cur_logits = torch.zeros(1, 4, 5, requires_grad=True)
    teacher_rows = torch.log_softmax(torch.tensor([[[0.0, 0, 0, 0, 0], [0, 0, 0, 4.0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]]), -1)
    span = torch.tensor([[0, 1, 0, 0]])
    teacher_choice_loss(aligned_logprobs(cur_logits).squeeze(0).unsqueeze(0), teacher_rows, span).backward()
    # The distribution of token 1 comes from logits at position 0: its argmax-teacher entry (3) is pushed up.
    g = cur_logits.grad[0, 0]
    assert g[3] < 0 and torch.all(g[[0, 1, 2, 4]] > 0)
    assert torch.all(cur_logits.grad[0, 1:] == 0)


class Bigram(torch.nn.Module):
    """logits at position i depend only on the token at i: which position fed which prediction is checkable."""

    def __init__(self, vocab: int = 11) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.table = torch.randn(vocab, vocab)

    def forward(self, input_ids, attention_mask=None):
        return type("Out", (), {"logits": self.table[input_ids]})()


def test_hint_alignment_slices_exactly_the_hint_positions():
    model = Bigram()
    ids = torch.tensor([1, 2, 3, 4, 5, 6, 7])
    hint = [9, 10, 8]
    start, end = 4, 6
    out = teacher_logprobs_with_hint(model, ids, (start, end), hint)
    assert out.shape == ids.shape
    table = torch.log_softmax(model.table, -1)
    for t in range(1, len(ids)):
        previous = hint[-1] if t == start else int(ids[t - 1])  # the span's first token is predicted after the hint
        assert math.isclose(float(out[t]), float(table[previous, ids[t]]), rel_tol=1e-6), t
    # Off-span positions equal the plain forward; the span's first position differs (the hint was read).
    plain = token_logprobs(model(ids.unsqueeze(0)).logits, ids.unsqueeze(0))[0]
    assert torch.allclose(out[:start], plain[:start]) and torch.allclose(out[start + 1 :], plain[start + 1 :])
    assert not torch.isclose(out[start], plain[start])
    logp, rows = teacher_logprobs_with_hint(model, ids, (start, end), hint, return_rows=True)
    assert rows.shape == (end - start, 11)
    assert torch.allclose(rows[0], table[hint[-1]]) and torch.allclose(rows[1], table[ids[start]])
    assert torch.allclose(rows.gather(-1, ids[start:end].unsqueeze(-1)).squeeze(-1), logp[start:end])
    with pytest.raises(ValueError, match="span"):
        teacher_logprobs_with_hint(model, ids, (0, 2), hint)


def test_hint_alignment_on_the_tiny_model():
    model, tok = build_tiny_model(seed=0)
    model.eval()
    ids = torch.tensor(tok.encode("<|user|>fix it<|end|><|assistant|><tool_call>{\"name\": \"grep\"}"))
    start = 30
    empty = teacher_logprobs_with_hint(model, ids, (start, start + 3), [])
    plain = token_logprobs(model(ids.unsqueeze(0)).logits, ids.unsqueeze(0))[0]
    assert torch.allclose(empty, plain, atol=1e-5)
    hinted = teacher_logprobs_with_hint(model, ids, (start, start + 3), tok.encode("<|user|>tools: read, write<|end|>"))
    # Causal: nothing before the insertion point sees the hint; from the span on, everything does.
    assert torch.allclose(hinted[:start], plain[:start], atol=1e-5)
    assert not torch.allclose(hinted[start:], plain[start:], atol=1e-5)
