"""The training loop: config parsing, metrics, exact resume, locality, text-only rows, LoRA."""

import math

import pytest
import torch

from flywheel_trainer.policy.losses import token_logprobs
from flywheel_trainer.policy.shards import Row, collate
from flywheel_trainer.policy.tiny import build_tiny_model
from flywheel_trainer.policy.train import PolicyTrainer, TrainerConfig, TrainerConfigError, held_out_split

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
    assert any("spanKl" in m and "rejectedProb" in m for m in lines)
    assert summary["rejectedProbBefore"] is not None and summary["rejectedProbAfter"] is not None


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
