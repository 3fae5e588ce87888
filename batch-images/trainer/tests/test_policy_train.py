"""The training loop: config parsing, metrics, exact resume, locality, text-only rows, LoRA."""

import math

import pytest
import torch

from flywheel_trainer.policy.losses import token_logprobs
from flywheel_trainer.policy.shards import Row, collate
from flywheel_trainer.policy.tiny import build_tiny_model
from flywheel_trainer.policy import train as train_module
from flywheel_trainer.policy.train import NonFiniteLossError, PolicyTrainer, TrainerConfig, TrainerConfigError, held_out_split, hint_token_ids
from flywheel_trainer.reward_model import TrainingDataError

from policy_rows import rollout_rows


def test_config_reads_camel_case_and_names_bad_fields():
    c = TrainerConfig.from_json({"steps": 4, "learningRate": 0.01, "batchSize": 2, "lora": {"rank": 4, "alpha": 8}, "saveEvery": 2})
    assert (c.steps, c.learning_rate, c.batch_size, c.lora, c.save_every, c.advantage_clip) == (4, 0.01, 2, {"rank": 4, "alpha": 8.0}, 2, 5.0)
    assert TrainerConfig.from_json(c.to_json()) == c
    with pytest.raises(TrainerConfigError, match="config.stepz"):
        TrainerConfig.from_json({"stepz": 3})
    with pytest.raises(TrainerConfigError, match="config.batchSize"):
        TrainerConfig.from_json({"batchSize": 1.5})


def test_metrics_per_step():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=12)
    train_rows, held = held_out_split(rows, count=2, minimum_rows=10)
    assert len(held) == 2 and all(not r.spans for r in held) and len(train_rows) == 10
    lines = []
    trainer = PolicyTrainer(model, tok, train_rows, TrainerConfig(steps=6, batch_size=4, learning_rate=3e-3, outcome_weight=0.0, decision_weight=1.0, teacher_choice_weight=0.5), held_out=held)
    summary = trainer.run(on_step=lines.append)
    assert [m["step"] for m in lines] == list(range(1, 7))
    for m in lines:
        assert {"loss", "outcome", "decision", "teacherChoice", "mismatch", "localityKl", "tokens", "stepSeconds", "at"} <= set(m)
        assert math.isfinite(m["loss"])
    first = lines[0]
    # On-policy at step 1: no train–inference mismatch; the locality KL (after each step) starts small and grows.
    assert first["mismatch"] < 1e-4 and 0 <= first["localityKl"] < lines[-1]["localityKl"]
    # `mismatch` is the first step's (before any update); `offPolicyGap` grows as training moves the policy.
    assert all(m["mismatch"] == first["mismatch"] for m in lines) and first["offPolicyGap"] == first["mismatch"]
    assert lines[-1]["offPolicyGap"] > first["offPolicyGap"]
    assert any("spanKl" in m and "rejectedProb" in m for m in lines)
    for m in lines:
        assert m.get("spanKl", 0.0) >= 0.0 and 0.0 <= m.get("rejectedProb", 0.5) <= 1.0 and m["offPolicyGap"] >= 0.0
    assert summary["rejectedProbBefore"] is not None and summary["rejectedProbAfter"] is not None
    assert 0.0 <= summary["rejectedProbAfter"] <= 1.0


def test_text_only_rows_never_enter_the_policy_gradient_term():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=4, spans=False)
    text_only = [Row(**{**r.__dict__, "has_token_ids": False, "behaviour_logprobs": [0.0] * len(r.input_ids)}) for r in rows]
    trainer = PolicyTrainer(model, tok, text_only, TrainerConfig(steps=1, batch_size=4, learning_rate=1e-2, decision_weight=0.0))
    before = [p.detach().clone() for p in trainer.model.parameters()]
    m = trainer.step()
    assert m["pgTokens"] == 0 and m["outcome"] == 0.0 and m["modelTokens"] > 0
    assert all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))


def _weights(trainer):
    return {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}


@pytest.mark.parametrize("lora", [None, {"rank": 4, "alpha": 8.0}])
def test_resume_gives_the_same_next_step_bit_for_bit(tmp_path, lora):
    config = TrainerConfig(steps=4, batch_size=3, learning_rate=5e-3, teacher_choice_weight=0.5, seed=7, save_every=2, lora=lora)

    def fresh():
        model, tok = build_tiny_model(seed=1)
        return PolicyTrainer(model, tok, rollout_rows(*build_tiny_model(seed=1), n=7), config)

    straight = fresh()
    straight_lines = []
    straight.run(on_step=straight_lines.append)

    first = fresh()
    saved = []
    first_lines = []

    def on_save(t):
        t.save_state(tmp_path / "state.pt")
        saved.append(t.step_count)

    class Stop(Exception):
        pass

    def stop_after_save(m):
        first_lines.append(m)
        if m["step"] == 2:
            on_save(first)
            raise Stop

    with pytest.raises(Stop):
        first.run(on_step=stop_after_save)
    assert saved == [2]

    resumed = fresh()
    resumed.load_state(tmp_path / "state.pt")
    assert resumed.step_count == 2
    resumed_lines = []
    resumed.run(on_step=resumed_lines.append)
    a, b = _weights(straight), _weights(resumed)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert [m["loss"] for m in first_lines + resumed_lines] == [m["loss"] for m in straight_lines]


def _logprobs(model, rows):
    batch = collate(rows, 256)
    with torch.no_grad():
        return token_logprobs(model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits, batch.input_ids), batch


def test_training_on_a_span_moves_held_out_rows_little():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=12)
    train_rows, held = held_out_split(rows, count=2, minimum_rows=10)
    span_rows = [r for r in train_rows if r.spans]
    before_span, span_batch = _logprobs(model, span_rows)
    before_held, held_batch = _logprobs(model, held)
    config = TrainerConfig(steps=8, batch_size=4, learning_rate=3e-3, outcome_weight=0.0, decision_weight=1.0)
    trainer = PolicyTrainer(model, tok, span_rows, config, held_out=held)
    lines = []
    summary = trainer.run(on_step=lines.append)
    after_span, _ = _logprobs(trainer.model, span_rows)
    after_held, _ = _logprobs(trainer.model, held)
    span_move = float(((after_span - before_span).abs() * span_batch.span_mask).sum() / span_batch.span_mask.sum())
    held_move = float(((after_held - before_held).abs() * held_batch.loss_mask).sum() / held_batch.loss_mask.sum())
    # The decision term's change lands on the spans: held-out rows' tokens move several times less.
    assert span_move > 3 * held_move > 0
    assert 0 < lines[-1]["localityKl"] < 0.2
    assert summary["rejectedProbAfter"] != summary["rejectedProbBefore"]


def test_rejected_probability_before_and_after_are_measured_on_the_same_rows():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=8)
    trainer = PolicyTrainer(model, tok, rows, TrainerConfig(steps=2, batch_size=2, learning_rate=3e-3))
    # Measured at init on the fixed rows (not on step 1's batch, which holds other spans).
    assert trainer.rejected_before == trainer.rejected_probability()
    assert trainer.rejected_rows == [r for r in rows if r.spans]
    summary = trainer.run()
    assert summary["rejectedProbBefore"] == trainer.rejected_before != summary["rejectedProbAfter"]


def test_an_empty_hint_makes_the_teacher_the_student_at_step_1(monkeypatch):
    # With no hint the teacher's prefill is the student's: on-policy, A_t = 0 and the span KL is 0 at step 1. A
    # teacher slice one position off would compare each span token with its neighbour's distribution.
    monkeypatch.setattr(train_module, "hint_token_ids", lambda tokenizer, text: [])
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=4)
    trainer = PolicyTrainer(model, tok, rows, TrainerConfig(steps=1, batch_size=4, outcome_weight=0.0, teacher_choice_weight=1.0))
    m = trainer.step()
    assert m["spans"] == 2 and abs(m["decision"]) < 1e-5 and 0.0 <= m["spanKl"] < 1e-5


def test_hint_rendering_leaves_out_what_the_template_puts_before_every_conversation():
    _, tok = build_tiny_model(seed=0)
    assert tok.decode(hint_token_ids(tok, "use read")) == "<|user|>use read<|end|>"
    # A template with a BOS, a default system prompt and a date header (as real ones have): none of it is in the hint.
    tok.chat_template = (
        "<|bos|>{% if messages[0]['role'] != 'system' %}<|system|>You are helpful. Today: 2026-12-03<|end|>{% endif %}"
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    )
    assert tok.decode(hint_token_ids(tok, "use read")) == "<|user|>use read<|end|>"


def test_builder_text_only_rows_count_in_their_group_and_never_enter_a_batch():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=4, spans=False)
    # As lib/training/datasets/trajectory-rows.ts writes a hosted-API rollout: no tokens, no spans, a reward and group.
    text_only = Row(sample_id="hosted#1", group_id="g0", input_ids=[], loss_mask=[], behaviour_logprobs=[], reward=5.0, has_token_ids=False, task_id="t0", attempt_id="hosted")
    trainer = PolicyTrainer(model, tok, rows + [text_only], TrainerConfig(steps=3, batch_size=8))
    assert text_only not in trainer.rows
    # g0 holds rows 0, 2 (reward −1 each) and the text-only row (5): the mean is 1, so each token row's advantage is −2.
    assert trainer._advantage[id(rows[0])] == pytest.approx(-2.0) and trainer._advantage[id(rows[1])] == pytest.approx(0.0)
    lines = trainer.run()
    assert lines["last"]["rows"] == 8 and all(r is not text_only for s in range(3) for r in trainer.batch_rows(s))
    with pytest.raises(TrainingDataError, match="no rows with tokens"):
        PolicyTrainer(model, tok, [text_only], TrainerConfig(steps=1))


def test_a_non_finite_loss_takes_no_step_and_fails_the_run():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=2, spans=False)
    t = rows[0].loss_mask.index(1)
    rows[0].behaviour_logprobs[t] = float("nan")  # on a model token: the importance weight is NaN
    trainer = PolicyTrainer(model, tok, rows, TrainerConfig(steps=1, batch_size=2))
    before = _weights(trainer)
    with pytest.raises(NonFiniteLossError, match="not finite"):
        trainer.step()
    after = _weights(trainer)
    assert trainer.step_count == 0 and all(torch.equal(before[k], after[k]) for k in before)


def test_a_row_and_its_hint_longer_than_the_context_is_bad_input():
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=2)
    model.config.max_position_embeddings = len(rows[0].input_ids) + 3  # the row fits, the row plus its hint does not
    with pytest.raises(TrainingDataError, match="exceed the model's context"):
        PolicyTrainer(model, tok, rows, TrainerConfig(steps=1))


def test_resume_refuses_a_state_saved_with_another_config(tmp_path):
    model, tok = build_tiny_model(seed=0)
    rows = rollout_rows(model, tok, n=4)
    config = TrainerConfig(steps=2, batch_size=2, save_every=1)
    trainer = PolicyTrainer(model, tok, rows, config)
    trainer.step()
    trainer.save_state(tmp_path / "state.pt")
    # More steps and another save interval resume; another learning rate does not.
    resumed = PolicyTrainer(*build_tiny_model(seed=0), rows, TrainerConfig(steps=5, batch_size=2, save_every=3))
    resumed.load_state(tmp_path / "state.pt")
    assert resumed.step_count == 1 and resumed.initial_mismatch == trainer.initial_mismatch
    other = PolicyTrainer(*build_tiny_model(seed=0), rows, TrainerConfig(steps=2, batch_size=2, learning_rate=0.5))
    with pytest.raises(TrainingDataError, match="config.learningRate"):
        other.load_state(tmp_path / "state.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a state")
    with pytest.raises(TrainingDataError, match="state: unreadable"):
        other.load_state(tmp_path / "junk.pt")
