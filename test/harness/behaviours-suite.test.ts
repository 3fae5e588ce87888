/**
 * The example suite of behavioural cases (examples/behaviours/): it loads as a suite, and each case runs end to end —
 * a scripted agent (scripted model server over HTTP), the simulated user's model where the case has one, the case's
 * user turns, tools and services, the trajectory stored, then graded by the rubric judge (a scripted judge model) —
 * and passes, with the events its script expects in the trajectory.
 */
import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { evalAttemptId } from '../../lib/harness/attempt/attempt-record.ts';
import { harnessGrader } from '../../lib/harness/attempt/harness-grader.ts';
import { runAttempt } from '../../lib/harness/attempt/run-attempt.ts';
import { loadSuite, type SuiteTask } from '../../lib/harness/eval/load-suite.ts';
import type { SandboxProvider } from '../../lib/harness/sandbox/sandbox.ts';
import { loadTrajectory } from '../../lib/harness/trajectory/store-trajectory.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { openPlainDirSandbox } from '../support/plain-dir-sandbox.ts';
import { startScriptedModelServer, type ScriptStep, type ScriptedModelServer } from '../support/scripted-model-server.ts';

const SUITE = join(import.meta.dirname, '../../examples/behaviours/tasks');
const SCRIPTS = join(import.meta.dirname, '../../examples/behaviours/scripts');

interface CaseScript {
  agent: ScriptStep[];
  user?: ScriptStep[];
  judge: ScriptStep[];
  expect: { stopReason: string; events: Record<string, number> };
  /** An agent that gets the behaviour wrong, and the judge's answers on it. */
  wrong?: { agent: ScriptStep[]; judge: ScriptStep[] };
}

async function readScript(name: string): Promise<CaseScript> {
  return JSON.parse(await readFile(join(SCRIPTS, `${name}.json`), 'utf8')) as CaseScript;
}

/** One attempt of a case: the scripted agent, judge and (when given) user, each a scripted model server over HTTP. */
async function runCase(name: string, agentSteps: ScriptStep[], judgeSteps: ScriptStep[], userSteps?: ScriptStep[]) {
  const { task, sourceDir } = tasks.find((t) => basename(t.file!, '.json') === name)!;
  const servers: ScriptedModelServer[] = [];
  const serve = async (steps: ScriptStep[], id: string) => {
    const server = await startScriptedModelServer(steps);
    servers.push(server);
    return { server, model: openAiCompatibleModel({ baseUrl: server.baseUrl, model: id, retry: { baseDelayMs: 1, maxAttempts: 1 } }) };
  };
  try {
    const agent = await serve(agentSteps, 'scripted-agent');
    const judge = await serve(judgeSteps, 'scripted-judge');
    const user = userSteps ? await serve(userSteps, 'scripted-user') : undefined;
    const runId = `behaviours-${++runs}`;
    const record = await runAttempt({
      runId,
      n: 0,
      task,
      sourceDir,
      mode: 'lenient',
      model: agent.model,
      ...(user ? { userModel: user.model } : {}),
      provider,
      ports,
      attemptId: evalAttemptId(runId, task.id, 'lenient', 0),
      grade: harnessGrader({ provider, blobs: ports.blobs, judge: { model: judge.model } }),
      retry: { maxTries: 1 },
    });
    const trajectory = await loadTrajectory(ports.blobs, record.trajectoryKey!);
    return { record, trajectory, agentCalls: agent.server.chatRequests().length, userCalls: user?.server.chatRequests().length ?? 0 };
  } finally {
    for (const s of servers) await s.close();
  }
}
let runs = 0;

/** Each attempt in a plain copy of the task's folder (the real sandbox passes its own conformance suite). */
const provider: SandboxProvider = { open: (spec) => openPlainDirSandbox({ fromDir: spec.sourceDir }) };

let root: string;
let ports: LocalPorts;
let tasks: SuiteTask[];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fw-behaviours-'));
  ports = openLocalPorts(join(root, 'data'));
  tasks = await loadSuite(SUITE);
});
afterAll(async () => {
  ports.close();
  await rm(root, { recursive: true, force: true });
});

const NAMES = ['agents-md', 'chat-report', 'clarification', 'incident-triage', 'interruption', 'long-horizon', 'new-tool', 'questionable-instruction', 'tool-removed'];

describe('the example suite of behavioural cases', () => {
  it('loads: every case is judge-graded with a rubric and a behaviour or AGENTS.md in its repository', () => {
    expect(tasks.map((t) => basename(t.file!, '.json'))).toEqual(NAMES);
    for (const { task } of tasks) {
      expect(task.grading).toEqual({ by: 'judge', minScore: 1 });
      expect(task.rubric!.length).toBeGreaterThan(0);
      expect(task.behaviour).toBeDefined();
    }
  });

  it.each(NAMES)('%s runs end to end with the scripted agent and passes the scripted judge', async (name) => {
    const script = await readScript(name);
    const { record, agentCalls, userCalls, trajectory } = await runCase(name, script.agent, script.judge, script.user);
    expect(record.stopReason?.kind).toBe(script.expect.stopReason);
    expect(agentCalls).toBe(script.agent.length);
    expect(userCalls).toBe(script.user?.length ?? 0);
    // The simulated user's tokens are on the attempt record, apart from the policy's.
    const stored = await ports.records.get(record.pk, record.sk);
    if (script.user) {
      expect(record.userUsage?.promptTokens).toBeGreaterThan(0);
      expect(stored?.['userUsage']).toEqual(record.userUsage);
    } else expect(record.userUsage).toBeUndefined();
    expect(record.grade?.['judgement']).toMatchObject({ score: 1, complete: true });
    expect(record.status).toBe('passed');
    for (const [kind, count] of Object.entries(script.expect.events)) {
      expect([kind, trajectory.steps.filter((s) => s.type === 'event' && s.kind === kind).length]).toEqual([kind, count]);
    }
  });

  it.each(['chat-report', 'interruption'])('%s fails when the agent gets the behaviour wrong', async (name) => {
    const script = await readScript(name);
    const { record } = await runCase(name, script.wrong!.agent, script.wrong!.judge);
    expect(record.stopReason?.kind).toBe('submitted');
    expect(record.status).toBe('failed');
    expect((record.grade?.['judgement'] as { score: number }).score).toBeLessThan(1);
    expect(record.grade?.reasons?.some((r) => r.startsWith('judge-score-below-threshold'))).toBe(true);
  });
});
