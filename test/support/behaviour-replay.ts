import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { RecordedRequest, ScriptStep } from './scripted-model-server.ts';

/**
 * One scripted model that plays every role of the example behavioural suite (examples/behaviours/) at once, so a
 * whole `flywheel eval run` can point `--model` and `--judge-model` at one scripted model server: each request is
 * told apart by what it is (the rubric judge's tool, the simulated user's prompt, else the agent), matched to its case
 * by the case's instruction (the agent's first user message; the longest instruction the judge's or user's prompt
 * contains), and answered with the step of that role's script numbered by the assistant messages already in the
 * request. Stateless, so concurrent attempts and retries replay the same.
 *
 * @example
 * const replay = await behaviourReplay('examples/behaviours');
 * const server = await startScriptedModelServer(replay.script);
 */
export interface BehaviourReplay {
  script: (request: RecordedRequest) => ScriptStep;
  /** Requests answered, by role and case (`agent:chat-report`). */
  served: Map<string, number>;
}

interface CaseFiles {
  name: string;
  instruction: string;
  script: { agent: ScriptStep[]; user?: ScriptStep[]; judge: ScriptStep[] };
}

const JUDGE_TOOL = 'record_rubric_verdicts';
const USER_PROMPT = 'You play a user';

export async function behaviourReplay(dir: string): Promise<BehaviourReplay> {
  const cases: CaseFiles[] = [];
  for (const file of (await readdir(join(dir, 'tasks'))).filter((f) => f.endsWith('.json')).sort()) {
    const name = basename(file, '.json');
    const task = JSON.parse(await readFile(join(dir, 'tasks', file), 'utf8')) as { instruction: string };
    const script = JSON.parse(await readFile(join(dir, 'scripts', file), 'utf8')) as CaseFiles['script'];
    cases.push({ name, instruction: task.instruction, script });
  }
  const served = new Map<string, number>();
  const fail = (message: string): ScriptStep => ({ error: { status: 400, body: { error: { message } } } });
  const script = (request: RecordedRequest): ScriptStep => {
    const messages = (request.body['messages'] as Array<{ role: string; content: string | null }>) ?? [];
    const tools = ((request.body['tools'] as Array<{ function: { name: string } }>) ?? []).map((t) => t.function.name);
    const text = messages.map((m) => m.content ?? '').join('\n');
    const step = messages.filter((m) => m.role === 'assistant').length;
    const containing = () => cases.filter((c) => text.includes(c.instruction)).sort((a, b) => b.instruction.length - a.instruction.length)[0];
    const role = tools.includes(JUDGE_TOOL) ? 'judge' : messages[0]?.content?.startsWith(USER_PROMPT) ? 'user' : 'agent';
    const found = role === 'agent' ? cases.find((c) => messages.find((m) => m.role === 'user')?.content === c.instruction) : containing();
    if (!found) return fail(`no example case matches this ${role} request`);
    const steps = found.script[role] ?? [];
    const key = `${role}:${found.name}`;
    served.set(key, (served.get(key) ?? 0) + 1);
    return steps[Math.min(step, steps.length - 1)] ?? fail(`${key} has no step ${step}`);
  };
  return { script, served };
}
