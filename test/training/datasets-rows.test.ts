import { describe, expect, it } from 'vitest';
import { trajectoryRows } from '../../lib/training/datasets/trajectory-rows.ts';
import { decision, scriptedTrajectory } from './datasets-support.ts';

const ctx = { groupId: 'r1#calc/add', reward: 1 };

describe('a trajectory becomes rows from its sampled token ids', () => {
  it('merges turns whose prompt extends the row: tool output and prompts masked, completions trained, log-probs where sampled', () => {
    const t = scriptedTrajectory('a1', [
      { prompt: [1, 2], completion: [3, 4], logprobs: [-0.5, -0.25] },
      // the next prompt = everything so far + the tool's output (50, 51)
      { prompt: [1, 2, 3, 4, 50, 51], completion: [5], logprobs: [-0.125] },
    ], { taskId: 'calc/add', checkpoint: 'ckpt-1' });
    const { rows, textOnly } = trajectoryRows(t, ctx, []);
    expect(textOnly).toBe(false);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      sampleId: 'a1#1',
      groupId: 'r1#calc/add',
      taskId: 'calc/add',
      attemptId: 'a1',
      policyCheckpoint: 'ckpt-1',
      policyVersion: '3',
      hasTokenIds: true,
      reward: 1,
      inputIds: [1, 2, 3, 4, 50, 51, 5],
      lossMask: [0, 0, 1, 1, 0, 0, 1],
      behaviourLogprobs: [0, 0, -0.5, -0.25, 0, 0, -0.125],
    });
  });

  it('starts a new row when a prompt does not start with the row so far (history re-rendered)', () => {
    const t = scriptedTrajectory('a2', [
      { prompt: [1, 2], completion: [3] },
      { prompt: [1, 2, 3, 9], completion: [4] },
      { prompt: [1, 7, 7], completion: [8, 8] }, // not a prefix extension: split
      { prompt: [1, 7, 7, 8, 8, 60], completion: [6] },
    ]);
    const { rows } = trajectoryRows(t, ctx, []);
    expect(rows.map((r) => r.sampleId)).toEqual(['a2#1', 'a2#3']);
    expect(rows[0]).toMatchObject({ inputIds: [1, 2, 3, 9, 4], lossMask: [0, 0, 1, 0, 1] });
    expect(rows[1]).toMatchObject({ inputIds: [1, 7, 7, 8, 8, 60, 6], lossMask: [0, 0, 0, 1, 1, 0, 1] });
    for (const r of rows) expect(r.behaviourLogprobs.every((lp, i) => (r.lossMask[i] === 0 ? lp === 0 : lp < 0))).toBe(true);
  });

  it('places decision spans on the message completion tokens (or the token span inside them) and skips what does not fit', () => {
    const t = scriptedTrajectory('a3', [
      { prompt: [1, 2], completion: [3, 4, 5] },
      { prompt: [1, 2, 3, 4, 5, 50], completion: [6, 7] },
    ]);
    const { rows, usedDecisions, skippedDecisions } = trajectoryRows(t, ctx, [
      decision('a3', 1, 1, { tokenSpan: { start: 1, end: 3 } }), // tokens 4, 5 → positions 3, 4
      decision('a3', 2, 2, { verified: true, hint: 'use bash' }), // whole completion → positions 6, 7
      decision('a3', 9, 3), // no such message
      decision('a3', 2, 4, { tokenSpan: { start: 1, end: 5 } }), // past the completion's 2 tokens
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.spans).toEqual([
      { start: 3, end: 5, decisionId: 'dec-00000000000000000001', hint: 'The tools that exist: bash, write_file, submit.', verified: false },
      { start: 6, end: 8, decisionId: 'dec-00000000000000000002', hint: 'use bash', verified: true },
    ]);
    for (const s of rows[0]!.spans) expect(rows[0]!.lossMask.slice(s.start, s.end).every((m) => m === 1)).toBe(true);
    expect(usedDecisions).toEqual(['dec-00000000000000000001', 'dec-00000000000000000002']);
    expect(skippedDecisions.map((s) => s.decisionId)).toEqual(['dec-00000000000000000003', 'dec-00000000000000000004']);
    expect(skippedDecisions[1]!.reason).toMatch(/outside the message's 2 completion tokens/);
  });

  it('keeps a text-only rollout (hosted API) as one marked row without tokens or spans', () => {
    const t = scriptedTrajectory('a4', [undefined, undefined], { taskId: 'calc/add' });
    const { rows, textOnly, skippedDecisions } = trajectoryRows(t, { groupId: 'g', reward: 0 }, [decision('a4', 1, 5)]);
    expect(textOnly).toBe(true);
    expect(rows).toEqual([
      { sampleId: 'a4#1', groupId: 'g', taskId: 'calc/add', attemptId: 'a4', policyCheckpoint: '', policyVersion: '', inputIds: [], lossMask: [], behaviourLogprobs: [], reward: 0, hasTokenIds: false, spans: [] },
    ]);
    expect(skippedDecisions[0]!.reason).toMatch(/text-only/);
  });

  it('treats a turn with log-probs of the wrong length as text-only (nothing half-aligned is trained on)', () => {
    const t = scriptedTrajectory('a5', [{ prompt: [1], completion: [2, 3], logprobs: [-1] }]);
    expect(trajectoryRows(t, ctx, []).rows[0]!.hasTokenIds).toBe(false);
  });
});
