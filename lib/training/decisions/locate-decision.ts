/**
 * A model locates the first wrong decision of a failed trajectory: it is shown the trajectory (each assistant message
 * with its id, the tool results, the outcome) and answers strict JSON `{ "messageId", "hint", "reason" }`. The answer
 * is validated: JSON alone, the message id one of the trajectory's assistant messages, a hint that says something.
 * Anything else gives no record, and the reason is reported. The model never sees the task's tests or reference patch.
 */
import { z } from 'zod';
import type { ModelsPort } from '../../ports/models.ts';
import type { Trajectory } from '../../harness/trajectory/trajectory-schema.ts';
import { assistantMessages, boundHint, type ExtractorResult } from './decision-candidate.ts';

/** Characters of one step the locator sees, and of the whole rendering. */
export const LOCATOR_LIMITS = { step: 1500, total: 60_000 } as const;

const AnswerSchema = z.strictObject({ messageId: z.string().min(1), hint: z.string().trim().min(1).max(8000), reason: z.string().max(2000).default('') });

const SYSTEM = [
  'You review a failed attempt of a coding agent. Find the FIRST assistant message whose decision was wrong (a wrong tool,',
  'wrong arguments, a wrong plan, a shortcut) and write a short hint that would have led the agent to a better decision at',
  'that point. The hint must use only what the agent could see at that point: never name hidden tests or their values.',
  'Answer with one JSON object and nothing else: {"messageId": "<the id of that assistant message>", "hint": "<the hint>",',
  '"reason": "<why this decision was wrong>"}.',
].join(' ');

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} …[${text.length - max} more characters]`;
}

/** The trajectory as the locator reads it: one entry per step, assistant messages under their ids. */
export function renderForLocator(trajectory: Trajectory): string {
  const lines: string[] = [];
  for (const s of trajectory.steps) {
    if (s.type === 'message' && s.role === 'user') lines.push(`[user] ${clip(s.content, LOCATOR_LIMITS.step)}`);
    if (s.type === 'assistant') {
      lines.push(`[assistant messageId=${s.messageId}] ${clip(s.content, LOCATOR_LIMITS.step)}`);
      for (const c of s.toolCalls) lines.push(`  [tool call ${c.name}] ${clip(c.arguments, LOCATOR_LIMITS.step)}`);
    }
    if (s.type === 'tool_result') lines.push(`[tool result ${s.name}${s.isError ? ' error' : ''}] ${clip(s.content, LOCATOR_LIMITS.step)}`);
    if (s.type === 'outcome') lines.push(`[outcome] ${JSON.stringify(s.stopReason)}`);
  }
  const text = lines.join('\n');
  return text.length <= LOCATOR_LIMITS.total ? text : `${text.slice(0, LOCATOR_LIMITS.total / 2)}\n…\n${text.slice(text.length - LOCATOR_LIMITS.total / 2)}`;
}

/** The answer as a JSON object: the whole reply, or one fenced ```json block. */
function parseAnswer(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(trimmed);
  return JSON.parse(fenced ? fenced[1]! : trimmed) as unknown;
}

/**
 * @example
 * const { candidates, skipped } = await locateDecision(createModel('openai:qwen@http://127.0.0.1:8000/v1'), trajectory, 'attempt-1');
 */
export async function locateDecision(model: ModelsPort, trajectory: Trajectory, ref: string): Promise<ExtractorResult> {
  const skip = (reason: string): ExtractorResult => ({ candidates: [], skipped: [{ source: 'locator-model', ref, reason }] });
  const messages = assistantMessages(trajectory);
  if (messages.size === 0) return skip('the trajectory has no assistant message');
  const reply = await model.chat({
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: renderForLocator(trajectory) },
    ],
    sampling: { temperature: 0, maxTokens: 1024 },
    returnTokens: false,
  });
  let raw: unknown;
  try {
    raw = parseAnswer(reply.message.content);
  } catch {
    return skip(`the locator model did not answer JSON: ${JSON.stringify(reply.message.content.slice(0, 200))}`);
  }
  const answer = AnswerSchema.safeParse(raw);
  if (!answer.success) return skip(`the locator model's answer is not {messageId, hint, reason}: ${answer.error.issues.map((i) => `${i.path.join('.') || '(answer)'}: ${i.message}`).join('; ')}`);
  const message = messages.get(answer.data.messageId);
  if (!message) return skip(`the locator model named ${JSON.stringify(answer.data.messageId.slice(0, 200))}, which is not an assistant message of the trajectory`);
  return {
    candidates: [
      {
        messageId: message.messageId,
        turn: message.turn,
        hintClass: 'model-located',
        hint: { text: boundHint(answer.data.hint), by: 'model', model: model.id },
        source: { kind: 'locator-model', model: model.id, reason: answer.data.reason.slice(0, 2000) },
      },
    ],
    skipped: [],
  };
}
