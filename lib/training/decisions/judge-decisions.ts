/**
 * Decisions from a judge: a failed criterion of a stored judgement (the harness keeps it on the attempt's grade,
 * `grade.judgement`) whose quoted evidence (from the trajectory or the final message) occurs in exactly one assistant
 * message. The hint is the criterion's text and the judge's reason (`by: 'model'`, the judge named).
 */
import { normalizeWhitespace } from '../../judges/rubric/attempt-view.ts';
import type { Judgement } from '../../judges/schemas.ts';
import type { AssistantLine, Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import type { DecisionRecord } from '../schemas.ts';
import { boundHint, type DecisionCandidate, type ExtractorResult, type SkippedDecision } from './decision-candidate.ts';

/** The markers the judge's view puts before agent text, and its continuation mark: not part of what the agent wrote. */
const VIEW_MARKERS = /\[(?:assistant|tool call|submitted)\] |│ ?/g;

/** The text of one assistant message as the judge's view shows it (content, each call as `name arguments`, a submitted answer). */
function messageText(m: AssistantLine): string {
  const parts = [m.content, ...m.toolCalls.map((c) => `${c.name} ${c.arguments}`)];
  for (const c of m.toolCalls) {
    if (c.name !== 'submit') continue;
    try {
      const answer = (JSON.parse(c.arguments) as { answer?: unknown }).answer;
      if (typeof answer === 'string') parts.push(answer);
    } catch {
      // not JSON: the arguments are there as written
    }
  }
  return normalizeWhitespace(parts.join('\n'));
}

/** The assistant messages a quote occurs in (whitespace-insensitive, the view's markers taken out). */
export function messagesQuoting(trajectory: Trajectory, quote: string): AssistantLine[] {
  const q = normalizeWhitespace(quote.replace(VIEW_MARKERS, ' '));
  if (q === '') return [];
  return trajectory.steps.filter((s): s is AssistantLine => s.type === 'assistant' && messageText(s).includes(q));
}

/** The quote's characters in the message's content or one call's arguments, when it occurs there verbatim. */
function charSpanOf(m: AssistantLine, quote: string): DecisionRecord['charSpan'] {
  const q = quote.replace(VIEW_MARKERS, '').trim();
  if (q === '') return undefined;
  const at = m.content.indexOf(q);
  if (at >= 0) return { field: 'content', start: at, end: at + q.length };
  for (const c of m.toolCalls) {
    // The view shows a call as `name arguments`: a quote of both spans the arguments.
    const a = q.startsWith(`${c.name} `) ? q.slice(c.name.length + 1).trim() : q;
    const i = a === '' ? -1 : c.arguments.indexOf(a);
    if (i >= 0) return { field: 'arguments', toolCallId: c.id, start: i, end: i + a.length };
  }
  return undefined;
}

/**
 * @example
 * const { candidates, skipped } = judgeDecisions(trajectory, judgement, { c2: 'The agent runs the tests before submitting' });
 */
export function judgeDecisions(trajectory: Trajectory, judgement: Judgement, criteria: Readonly<Record<string, string>> = {}): ExtractorResult {
  const judge = `${judgement.judge.name}@${judgement.judge.version}`;
  const candidates: DecisionCandidate[] = [];
  const skipped: SkippedDecision[] = [];
  for (const c of judgement.criteria) {
    if (c.verdict !== 'fail' || c.voided !== undefined) continue;
    const ref = `${judge}:${c.id}`;
    const quotes = c.evidence.filter((e) => e.source === 'trajectory' || e.source === 'final-message');
    if (quotes.length === 0) {
      skipped.push({ source: 'judge', ref, reason: 'no evidence quoted from the trajectory or the final message' });
      continue;
    }
    let placed: { message: AssistantLine; quote: string } | undefined;
    const why: string[] = [];
    for (const e of quotes) {
      const found = messagesQuoting(trajectory, e.quote);
      if (found.length === 1) {
        placed = { message: found[0]!, quote: e.quote };
        break;
      }
      why.push(found.length === 0 ? 'the quote is in no assistant message' : `the quote is in ${found.length} assistant messages`);
    }
    if (!placed) {
      skipped.push({ source: 'judge', ref, reason: why.join('; ') });
      continue;
    }
    const criterion = criteria[c.id] ?? c.id;
    const span = charSpanOf(placed.message, placed.quote);
    candidates.push({
      messageId: placed.message.messageId,
      turn: placed.message.turn,
      ...(span ? { charSpan: span } : {}),
      hintClass: 'judge-criterion',
      hint: { text: boundHint(`${criterion}${c.reason.trim() ? `\n(${c.reason.trim()})` : ''}`), by: 'model', model: judge },
      source: { kind: 'judge', judge, criterion: c.id, quote: placed.quote.slice(0, 4000) },
    });
  }
  return { candidates, skipped };
}
