/**
 * What an extractor returns: decision candidates (a record before its id, leakage check and lineage) and what it
 * left out, and why. Helpers every extractor shares: the deterministic decision id, the trajectory's assistant
 * messages by id, the tools active at a point of the episode, what the student had seen before a decision.
 *
 * @example
 * const id = decisionIdOf('trajectories/attempts/a.jsonl', 'a:m3', { kind: 'harness-event', eventKind: 'tool.unknown', eventSeq: 7 });
 */
import { createHash } from 'node:crypto';
import type { AssistantLine, Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import type { DecisionRecord, DecisionSource, HintClass } from '../schemas.ts';

/** Characters a hint keeps at most (the record's bound). */
export const HINT_MAX_CHARS = 8000;

export interface DecisionCandidate {
  messageId: string;
  turn: number;
  tokenSpan?: DecisionRecord['tokenSpan'];
  charSpan?: DecisionRecord['charSpan'];
  hintClass: HintClass;
  hint: DecisionRecord['hint'];
  source: DecisionSource;
}

/** Something an extractor did not turn into a candidate: which (an event, a criterion, a feedback event) and why. */
export interface SkippedDecision {
  source: DecisionSource['kind'];
  ref: string;
  reason: string;
}

export interface ExtractorResult {
  candidates: DecisionCandidate[];
  skipped: SkippedDecision[];
}

/** The part of a source that makes it this source (two sources with the same identity are one record). */
export function sourceIdentity(source: DecisionSource): string {
  switch (source.kind) {
    case 'harness-event':
      return `harness-event\u0000${source.eventKind}\u0000${source.eventSeq}`;
    case 'person':
      return `person\u0000${source.feedbackEventId}`;
    case 'judge':
      return `judge\u0000${source.judge}\u0000${source.criterion}`;
    case 'locator-model':
      return `locator-model\u0000${source.model}`;
  }
}

/**
 * `dec-` + 20 hex of sha256 over the trajectory's blob key, the message id and the source's identity. A locator
 * model's decision is one per trajectory and model, whichever message it named (a second run of the model, which may
 * name another message, finds the first record instead of adding a duplicate).
 */
export function decisionIdOf(blobKey: string, messageId: string, source: DecisionSource): string {
  const where = source.kind === 'locator-model' ? '' : messageId;
  const hash = createHash('sha256').update(`${blobKey}\u0000${where}\u0000${sourceIdentity(source)}`).digest('hex');
  return `dec-${hash.slice(0, 20)}`;
}

/** The trajectory's assistant messages by message id. */
export function assistantMessages(trajectory: Trajectory): Map<string, AssistantLine> {
  const out = new Map<string, AssistantLine>();
  for (const step of trajectory.steps) if (step.type === 'assistant') out.set(step.messageId, step);
  return out;
}

export interface ToolSummary {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * The tools the agent had at a point of the episode: the header's tools, changed by every `tool.added` /
 * `tool.removed` event before `beforeSeq` (the harness puts the active names in `detail.tools`; a tool the header
 * does not describe is known by its name only).
 */
export function toolsAt(trajectory: Trajectory, beforeSeq: number): ToolSummary[] {
  const known = new Map<string, ToolSummary>(trajectory.header.tools.map((t) => [t.name, t]));
  let active = trajectory.header.tools.map((t) => t.name);
  for (const step of trajectory.steps) {
    if (step.type !== 'event' || step.seq >= beforeSeq || (step.kind !== 'tool.added' && step.kind !== 'tool.removed')) continue;
    const names = step.detail['tools'];
    if (Array.isArray(names) && names.every((n) => typeof n === 'string')) {
      active = names as string[];
      continue;
    }
    const name = toolNameOf(step.detail);
    if (!name) continue;
    active = step.kind === 'tool.removed' ? active.filter((n) => n !== name) : active.includes(name) ? active : [...active, name];
  }
  return active.map((name) => known.get(name) ?? { name, description: '', parameters: {} });
}

function toolNameOf(detail: Record<string, unknown>): string | undefined {
  const t = detail['tool'] ?? detail['name'];
  if (typeof t === 'string') return t;
  if (typeof t === 'object' && t !== null && typeof (t as { name?: unknown }).name === 'string') return (t as { name: string }).name;
  return undefined;
}

/** One line per tool: `- name: the first line of its description`. */
export function toolLines(tools: readonly ToolSummary[]): string {
  return tools.map((t) => `- ${t.name}${t.description.trim() ? `: ${t.description.trim().split('\n')[0]!.trim()}` : ''}`).join('\n');
}

/**
 * What the student could have known at a decision: the tools it was given (and those added or removed before it),
 * every message, tool call and tool result before the decision's message, and the decision itself (its own words and
 * calls: a hint may quote what the student wrote). The leakage check lets a hint repeat any of it.
 */
export function seenBefore(trajectory: Trajectory, messageId: string): string {
  const decision = trajectory.steps.find((s) => s.type === 'assistant' && s.messageId === messageId);
  const limit = decision?.seq ?? Number.MAX_SAFE_INTEGER;
  const parts: string[] = trajectory.header.tools.map((t) => `${t.name} ${t.description} ${JSON.stringify(t.parameters)}`);
  for (const s of trajectory.steps) {
    if (s.seq > limit) break;
    if (s.type === 'assistant') parts.push(s.content, ...s.toolCalls.map((c) => `${c.name} ${c.arguments}`));
    if (s.seq === limit) break;
    if (s.type === 'message' || s.type === 'tool_result') parts.push(s.content);
    if (s.type === 'event' && (s.kind === 'tool.added' || s.kind === 'tool.removed')) parts.push(`${s.message} ${JSON.stringify(s.detail)}`);
  }
  return parts.join('\n');
}

/** A hint cut to the record's bound. */
export function boundHint(text: string): string {
  return text.length <= HINT_MAX_CHARS ? text : `${text.slice(0, HINT_MAX_CHARS - 20)} …[cut]`;
}

/** The text of one token of the policy's tokenizer (a byte-level tokenizer's byte, say), for `exactTokenSpan`. */
export type DecodeToken = (id: number) => string;

/**
 * The decision's tokens, when they can be known exactly: the message's completion token ids, decoded token by token,
 * hold the decision's characters once, starting and ending on token boundaries. Anything less exact gives undefined
 * (the dataset builder then takes the whole message).
 *
 * @example
 * exactTokenSpan(message, { field: 'arguments', toolCallId: 'c1', start: 0, end: 13 }, (id) => String.fromCharCode(id)); // { start: 12, end: 25 }
 */
export function exactTokenSpan(message: AssistantLine, charSpan: DecisionRecord['charSpan'], decodeToken: DecodeToken): DecisionRecord['tokenSpan'] {
  const ids = message.tokens?.completionTokenIds;
  if (!ids || ids.length === 0 || !charSpan) return undefined;
  const source = charSpan.field === 'content' ? message.content : message.toolCalls.find((c) => c.id === charSpan.toolCallId)?.[charSpan.field === 'tool-name' ? 'name' : 'arguments'];
  if (source === undefined || charSpan.start < 0 || charSpan.end > source.length || charSpan.start >= charSpan.end) return undefined;
  const target = source.slice(charSpan.start, charSpan.end);
  const pieces = ids.map(decodeToken);
  const text = pieces.join('');
  const at = text.indexOf(target);
  if (at < 0 || text.indexOf(target, at + 1) >= 0) return undefined;
  let offset = 0;
  let start: number | undefined;
  for (let i = 0; i <= pieces.length; i++) {
    if (offset === at) start = i;
    if (offset === at + target.length && start !== undefined) return i > start ? { start, end: i } : undefined;
    if (i < pieces.length) offset += pieces[i]!.length;
  }
  return undefined;
}
