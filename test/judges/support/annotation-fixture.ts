/**
 * Shared pieces of the annotation, calibration and drift tests: signals that show scope creep or praise, a scripted
 * failure-mode judge (over the scripted model server) that errs on the signals named, and a helper that labels a
 * gold set as people would.
 */
import { JUDGE_TOOL } from '../../../lib/modes/judge-signal.ts';
import type { LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { labelAnnotation, listAllAnnotations } from '../../../lib/judges/annotation/annotation-queue.ts';
import { goldSetQueue } from '../../../lib/judges/annotation/record-keys.ts';
import type { Subject } from '../../../lib/judges/schemas.ts';
import { reply, type ScriptStep, type RecordedRequest } from '../../support/scripted-model-server.ts';
import { storeFeedback } from '../../modes/support/modes-fixture.ts';

export const SCOPE = 'scope-calibration';
export const SCOPE_LABEL = `mode:${SCOPE}`;
const SCOPE_TEXT = 'it rewrote the whole module when I asked for a one-line fix';
const PRAISE_TEXT = 'thanks, exactly what I needed';

/** Stores `n` scope-creep signals and `n` praise signals; returns their keys and what people say (yes/no). */
export async function storeSignals(ports: LocalPorts, n: number, prefix = 's'): Promise<Array<{ key: string; tag: string; truth: 'yes' | 'no' }>> {
  const out: Array<{ key: string; tag: string; truth: 'yes' | 'no' }> = [];
  for (let i = 0; i < n; i++) {
    for (const truth of ['yes', 'no'] as const) {
      const tag = `${prefix}-${truth}-${i}`;
      // A fixed id per tag: the two-person slice is a hash of the subject, so the same items land in it on every run
      // (with the process id in the id, some runs drew a slice of one class only, and no human ceiling).
      const id = await storeFeedback(ports, { eventId: `sig-${tag}`, comment: `[${tag}] ${truth === 'yes' ? SCOPE_TEXT : PRAISE_TEXT}`, rating: truth === 'yes' ? 'down' : 'up' });
      out.push({ key: `feedback:${id}`, tag, truth });
    }
  }
  return out;
}

/**
 * The scripted failure-mode judge: names scope-calibration on a scope-creep comment and nothing on praise, except on
 * the tags in `wrong`, where it says the opposite (quoting the comment, so its answer passes the evidence check).
 */
export function scriptedFailureModeJudge(wrong: ReadonlySet<string>): (request: RecordedRequest) => ScriptStep {
  return (request) => {
    const messages = request.body['messages'] as Array<{ role: string; content: string }>;
    const user = messages.find((m) => m.role === 'user')!.content;
    const tag = /\[([^\]]+)\]/.exec(user)![1]!;
    const scope = tag.includes('-yes-') !== wrong.has(tag);
    const evidence = user.includes(SCOPE_TEXT) ? SCOPE_TEXT : PRAISE_TEXT;
    return reply.tool(JUDGE_TOOL, scope ? { modes: [{ mode: SCOPE, severity: 'medium' }], evidence, evidenceSource: 'comment', confidence: 0.9 } : { modes: [], evidence: '', evidenceSource: 'comment', confidence: 0.9 });
  };
}

/** People label every pending item of a gold set as `labelsOf` says (`ana`; `bob` too on the two-person slice). */
export async function labelGoldSetWith(ports: LocalPorts, goldSet: string, labelsOf: (subject: Subject) => Record<string, string>): Promise<number> {
  const pending = await listAllAnnotations(ports, { queue: goldSetQueue(goldSet), status: 'pending' });
  for (const item of pending) {
    await labelAnnotation(ports, item.id, { annotator: 'ana', labels: labelsOf(item.subject) });
    if (item.needs === 2) await labelAnnotation(ports, item.id, { annotator: 'bob', labels: labelsOf(item.subject) });
  }
  return pending.length;
}

/** People label every pending item of a gold set with the truth (`ana`; `bob` too on the two-person slice). */
export async function labelGoldSet(ports: LocalPorts, goldSet: string, truthOf: (signalKey: string) => 'yes' | 'no'): Promise<number> {
  return labelGoldSetWith(ports, goldSet, (subject) => ({ [SCOPE_LABEL]: truthOf(subject.kind === 'signal' ? subject.signalKey : '') }));
}
