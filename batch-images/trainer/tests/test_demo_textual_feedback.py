"""Smoke version of the textual-feedback demo (policy/demo_textual_feedback.py): a student that reliably calls a tool
that does not exist, and that calls a real one when told the tools; from the same start and the same number of
on-policy steps, the decision-point term (hint teacher, span only) lowers the bad tool's probability at the decision
more than the Dr. GRPO outcome term alone does."""

from dataclasses import replace

import torch

from flywheel_trainer.policy.demo_textual_feedback import (
    BAD_TOOL,
    REAL_TOOLS,
    DemoConfig,
    Env,
    _HELDOUT_FILES,
    bad_tool_prob,
    markdown_table,
    tasks,
    train_run,
    warm_start,
)
from flywheel_trainer.policy.tiny import build_tiny_model

STEPS = 6
SHARE = 0.98  # the student calls search_web in 98% of the no-hint warm-up episodes


def test_the_decision_span_ends_at_the_tool_name_and_the_hint_sits_before_the_assistant_turn():
    _, tok = build_tiny_model(seed=0)
    env = Env(tok)
    completion = env.completion(BAD_TOOL, {"q": "a.py"})
    start, end = env.span(completion)
    assert tok.decode(completion[start:end]) == '<|assistant|><tool_call>{"name": "search_web'
    assert env.called_tool(completion) == BAD_TOOL
    assert env.called_tool(env.completion("read_file", {})) in REAL_TOOLS
    assert env.called_tool(env.ids("<|assistant|>garbage") + [env.end_id]) is None
    task = tasks(_HELDOUT_FILES)[0]
    # The warm-up's hinted prompt is the plain prompt + the hint: what teacher_forward builds by inserting the hint
    # right before the decision span (which starts at <|assistant|>).
    assert env.prompt(task, hint=True) == env.prompt(task) + env.hint_ids


def test_decision_term_lowers_the_bad_tool_more_than_the_outcome_term_in_the_same_steps():
    torch.set_num_threads(2)
    cfg = DemoConfig(seeds=1, sft_steps=300, max_steps=STEPS, threshold=1e-9, lr=3e-4)
    model, env = warm_start(0, cfg, SHARE)
    heldout = tasks(_HELDOUT_FILES)
    start = bad_tool_prob(model, env, heldout)
    assert start > 0.8, f"the warm start should call {BAD_TOOL} reliably without the hint (P = {start:.3f})"
    assert bad_tool_prob(model, env, heldout, hint=True) < 0.05, "and a real tool when the hint names them"
    state = {k: v.clone() for k, v in model.state_dict().items()}
    decision = train_run("decision", state, env, 0, cfg, SHARE)
    outcome = train_run("outcome", state, env, 0, cfg, SHARE)
    assert decision.steps_run == outcome.steps_run == STEPS
    assert decision.bad_prob_start == outcome.bad_prob_start == start
    drop_decision = start - decision.bad_prob_end
    drop_outcome = start - outcome.bad_prob_end
    assert drop_decision > 0
    assert drop_decision > drop_outcome, f"decision term: {start:.3f} → {decision.bad_prob_end:.3f}; outcome term: {start:.3f} → {outcome.bad_prob_end:.3f}"
    assert decision.locality_kl >= 0 and outcome.locality_kl >= 0


def test_the_table_says_not_within_n_for_an_unfixed_run():
    summary = {
        "config": replace(DemoConfig(), max_steps=5).__dict__,
        "medians": [
            {"badShare": 0.98, "term": "decision", "stepsToFix": 3, "fixedRuns": 1, "runs": 1, "badProbStart": 0.97, "badProbEnd": 0.05, "localityKl": 1e-3},
            {"badShare": 0.98, "term": "outcome", "stepsToFix": None, "fixedRuns": 0, "runs": 1, "badProbStart": 0.97, "badProbEnd": 0.9, "localityKl": 1e-4},
        ],
    }
    table = markdown_table(summary)
    assert "| 3 | 1/1 |" in table
    assert "not within 5" in table
