/**
 * Decisions from the harness's own events: a call to a tool that does not exist (`tool.unknown`), arguments that do
 * not fit the tool (`tool.bad-arguments`), a call to a tool removed during the episode (`tool.unavailable`), and a
 * blocked shortcut (`network.blocked`, `git.history-needed`). The hint is written by code from what the harness knew
 * and showed the agent (the tool list, the tool's parameter schema, the sandbox's rules): `by: 'rule'`.
 *
 * The sandbox reports blocked network and history as observations on the attempt record, not as trajectory events:
 * `observationEvents` places each on the tool call that was running when it happened.
 */
import type { SandboxObservation } from '../../harness/sandbox/sandbox.ts';
import type { EventLine, Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import type { DecisionRecord, HintClass } from '../schemas.ts';
import { assistantMessages, boundHint, toolLines, toolsAt, type DecisionCandidate, type ExtractorResult, type SkippedDecision } from './decision-candidate.ts';

/** The event kinds this extractor reads, and the hint class each gives. */
export const HARNESS_EVENT_HINT_CLASSES: Readonly<Record<string, HintClass>> = {
  'tool.unknown': 'available-tools',
  'tool.bad-arguments': 'tool-arguments',
  'tool.unavailable': 'tool-unavailable',
  'network.blocked': 'sandbox-rules',
  'git.history-needed': 'sandbox-rules',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * One candidate per harness event that names an assistant message of the trajectory (the same kind on the same call
 * of one message once).
 *
 * @example
 * const { candidates, skipped } = harnessEventDecisions(parseJsonl(text), { observations: attempt.observations });
 * candidates[0]?.hintClass; // 'available-tools'
 */
export function harnessEventDecisions(trajectory: Trajectory, options: { observations?: readonly SandboxObservation[] } = {}): ExtractorResult {
  const messages = assistantMessages(trajectory);
  const events = [...trajectory.steps.filter((s): s is EventLine => s.type === 'event' && s.kind in HARNESS_EVENT_HINT_CLASSES), ...observationEvents(trajectory, options.observations ?? [])];
  const candidates: DecisionCandidate[] = [];
  const skipped: SkippedDecision[] = [];
  const seen = new Set<string>();
  for (const event of events) {
    const ref = `${event.kind}@${event.seq}`;
    const message = event.messageId !== undefined ? messages.get(event.messageId) : undefined;
    if (!message) {
      skipped.push({ source: 'harness-event', ref, reason: event.messageId === undefined ? 'the event names no message' : `no assistant message ${event.messageId} in the trajectory` });
      continue;
    }
    const once = `${message.messageId}\u0000${event.kind}\u0000${event.span?.toolCallId ?? ''}`;
    if (seen.has(once)) continue;
    seen.add(once);
    const hintClass = HARNESS_EVENT_HINT_CLASSES[event.kind]!;
    const text = hintFor(trajectory, event);
    candidates.push({
      messageId: message.messageId,
      turn: message.turn,
      ...(event.span ? { charSpan: charSpanOf(event.span) } : {}),
      hintClass,
      hint: { text: boundHint(text), by: 'rule' },
      source: { kind: 'harness-event', eventKind: event.kind, eventSeq: event.seq },
    });
  }
  return { candidates, skipped };
}

function charSpanOf(span: NonNullable<EventLine['span']>): NonNullable<DecisionRecord['charSpan']> {
  return { field: span.field, ...(span.toolCallId !== undefined ? { toolCallId: span.toolCallId } : {}), start: span.start, end: span.end };
}

function hintFor(trajectory: Trajectory, event: EventLine): string {
  const tool = str(event.detail['tool']) ?? '';
  switch (event.kind) {
    case 'tool.unknown': {
      const tools = toolsAt(trajectory, event.seq);
      return `There is no tool named "${tool}". The tools that exist are:\n${toolLines(tools)}`;
    }
    case 'tool.unavailable': {
      const tools = toolsAt(trajectory, event.seq);
      return `The tool "${tool}" is no longer available at this point of the episode: it was removed. The tools left are:\n${toolLines(tools)}`;
    }
    case 'tool.bad-arguments': {
      const def = toolsAt(trajectory, event.seq).find((t) => t.name === tool) ?? trajectory.header.tools.find((t) => t.name === tool);
      const issues = Array.isArray(event.detail['issues']) ? (event.detail['issues'] as unknown[]).map(String) : [];
      const wrong =
        issues.length > 0 ? issues.join('; ') : event.detail['reason'] === 'invalid-json' ? 'the arguments were not valid JSON' : (str(event.detail['reason']) ?? 'the arguments did not match the schema');
      const schema = def ? JSON.stringify(def.parameters) : '(not recorded)';
      return `The arguments of "${tool}" must be a JSON object matching this schema: ${schema}\nWhat was wrong: ${wrong}`;
    }
    case 'network.blocked': {
      const host = str(event.detail['host']);
      return `The network is closed in this sandbox${host ? `: ${host} cannot be reached` : ''}. Do not download code or data; work with what is in the workspace.`;
    }
    default: {
      // git.history-needed
      const argv = Array.isArray(event.detail['argv']) ? (event.detail['argv'] as unknown[]).map(String).join(' ') : '';
      return `The repository has no history before its base commit here${argv ? `, so \`${argv}\` cannot see earlier commits` : ''}. Read and change the files in the workspace instead.`;
    }
  }
}

/**
 * The sandbox's blocked-network and history observations as events on the tool call that was running when each
 * happened (a tool result's window is `[at - durationMs, at]`); an observation inside no single call's window is left
 * out. Sequence numbers are the tool result's.
 */
export function observationEvents(trajectory: Trajectory, observations: readonly SandboxObservation[]): EventLine[] {
  const results = trajectory.steps.flatMap((s) => (s.type === 'tool_result' ? [{ s, end: Date.parse(s.at), start: Date.parse(s.at) - s.durationMs }] : []));
  const out: EventLine[] = [];
  for (const o of observations) {
    if (o.kind !== 'network.blocked' && o.kind !== 'git.history-needed') continue;
    const at = Date.parse(o.at);
    const during = results.filter((r) => r.start <= at && at <= r.end);
    if (during.length !== 1) continue;
    const r = during[0]!.s;
    out.push({ type: 'event', seq: r.seq, at: o.at, kind: o.kind, messageId: r.messageId, span: { toolCallId: r.toolCallId, field: 'arguments', start: 0, end: argumentsLength(trajectory, r.messageId, r.toolCallId) }, message: o.kind, detail: o.detail });
  }
  return out;
}

function argumentsLength(trajectory: Trajectory, messageId: string, toolCallId: string): number {
  const m = trajectory.steps.find((s) => s.type === 'assistant' && s.messageId === messageId);
  return m?.type === 'assistant' ? (m.toolCalls.find((c) => c.id === toolCallId)?.arguments.length ?? 0) : 0;
}
