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
    Locality,
    _HELDOUT_FILES,
    bad_tool_prob,
    episodes,
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


def test_an_episode_of_six_decisions_has_one_bad_turn_its_span_and_the_hint_right_before_it():
    _, tok = build_tiny_model(seed=0)
    env = Env(tok, decisions=6)
    cfg = DemoConfig(episode_decisions=6)
    assert cfg.bad_turn == 3
    episode = episodes(_HELDOUT_FILES, 6, seed=1, bad_turn=3)[0]
    assert len(episode) == 6 and episode[3].text.startswith("Find the docs for")
    bad = env.scripted(episode, bad_turn=3)
    good = env.scripted(episode)
    assert bad.tools == [t.tool for t in episode[:3]] + [BAD_TOOL] + [t.tool for t in episode[4:]]
    assert not bad.ok() and good.ok() and bad.failing_turn(0) == 3 and good.failing_turn(3) == 3
    s, e = bad.spans[3]
    assert tok.decode(bad.ids[s:e]) == '<|assistant|><tool_call>{"name": "search_web'
    assert tok.decode(bad.ids[:s]).endswith("<|user|>Step 4: " + episode[3].text + "<|end|>")
    # The student's tokens: its six turns, not the environment's replies or the questions.
    assert sum(bad.model) == sum(len(env.completion(t, a)) for t, a in [(x.tool, x.args) for x in episode[:3]] + [(BAD_TOOL, {"q": "a.py"})] + [(x.tool, x.args) for x in episode[4:]])
    assert tok.decode([i for i, m in zip(bad.ids, bad.model) if not m]).count("<|tool|>") == 5
    hinted = env.scripted(episode, hint_turn=3)
    h = len(env.hint_ids)
    assert hinted.ids == good.ids[: good.spans[3][0]] + env.hint_ids + good.ids[good.spans[3][0] :]
    assert hinted.spans[:3] == good.spans[:3] and hinted.spans[3] == (good.spans[3][0] + h, good.spans[3][1] + h)
    # Locality counts every student token but the bad decision's span: five whole turns and turn 4's arguments.
    locality = Locality(build_tiny_model(seed=0)[0], env, [episode], bad_turn=3)
    assert int(locality.mask[0].sum()) == sum(bad.model) - (e - s)


def test_decision_term_lowers_the_bad_tool_more_than_the_outcome_term_in_the_same_steps():
    torch.set_num_threads(2)
    cfg = DemoConfig(seeds=1, sft_steps=200, max_steps=STEPS, threshold=1e-9, lr=3e-4)
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
