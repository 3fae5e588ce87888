/**
 * The rubric judge as a runner of attempt subjects (what a derivation calibrates and distils for rubric judges): it
 * reads the attempt, its task's instruction and rubric from the registry, its diff, and asks the judge over the models
 * port (a scripted OpenAI-compatible server); evidence is checked, a voided criterion gives no label.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { attemptRecord } from '../../lib/harness/attempt/record-codecs.ts';
import { DEFAULT_DERIVE_SETTINGS, defaultJudgeRunners } from '../../lib/judges/derive/judge-runners.ts';
import { defaultRubricJudge, RUBRIC_TOOL } from '../../lib/judges/rubric/judge-attempt.ts';
import { taskRecord } from '../../lib/registry/record-codecs.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-derive-rubric-');
let server: ScriptedModelServer | undefined;
afterAll(async () => server?.close());

describe('rubric judge runner', () => {
  it('labels each criterion of an attempt from the registry, leaving out a voided one, with cost from the price', async () => {
    const ports = openLocalPorts(tempDir());
    try {
      const diff = '--- a/calc.py\n+++ b/calc.py\n+def add(first_number, second_number):\n+    return first_number + second_number\n';
      await ports.blobs.put('evals/r1/diff.patch', diff);
      await ports.records.put(taskRecord.encode({ suite: 'calc', taskId: 'add', task: { instruction: 'Add an add function', rubric: [{ id: 'c1', criterion: 'adds add' }, { id: 'c2', criterion: 'asks nothing' }] } }));
      const now = new Date().toISOString();
      await ports.records.put(
        attemptRecord.encode({
          kind: 'eval-attempt', runId: 'r1', attemptId: 'r1.add.strict.0', taskId: 'add', suite: 'calc', mode: 'strict', n: 0, status: 'passed',
          usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 }, usageAllTries: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 },
          turns: 1, durationMs: 1, diffKey: 'evals/r1/diff.patch', grade: { passed: true }, model: 'm', tries: 1, history: [], startedAt: now, finishedAt: now,
        }),
      );
      // c1 passes with a quote that is in the diff (long enough for the evidence rule); c2's quote is not in the attempt, every time: voided.
      server = await startScriptedModelServer(() =>
        reply.tool(RUBRIC_TOOL, {
          verdicts: [
            { id: 'c1', verdict: 'pass', reason: 'adds it', evidence: [{ source: 'diff', quote: 'return first_number + second_number' }] },
            { id: 'c2', verdict: 'pass', reason: 'quiet', evidence: [{ source: 'diff', quote: 'not in the attempt at all' }] },
          ],
        }),
      );
      const def = defaultRubricJudge(`openai:judge@${server.baseUrl}`);
      const runners = defaultJudgeRunners(ports, { ...DEFAULT_DERIVE_SETTINGS, pricing: [{ prefix: 'openai:judge@', usdPerVerdict: 0.001 }] });
      const run = runners.runnerFor(def)!;
      const answer = await run({ kind: 'attempt', runId: 'r1', attemptId: 'ATTEMPT#add#strict#0' });
      expect(answer.labels).toEqual({ c1: 'pass' });
      expect(answer.costUsd).toBe(0.001);
      expect(await runners.textOf({ kind: 'attempt', runId: 'r1', attemptId: 'ATTEMPT#add#strict#0' })).toContain('return first_number + second_number');
      await expect(run({ kind: 'signal', signalKey: 'feedback:x' })).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
    } finally {
      ports.close();
    }
  }, 60_000);
});
