/**
 * The LLM judge of the failure-mode chain: asked only when the local classifier is unsure. It answers through one
 * tool call (structured output) naming modes of the taxonomy, a severity each, an evidence span quoted from the
 * comment or the trajectory, and its confidence. Every answer is checked: JSON that does not parse, a field that
 * does not validate, a mode the taxonomy does not have, or evidence that does not occur in the text is refused and
 * the judge is asked again with the reason, a bounded number of times. What is still wrong after that is reported,
 * never guessed at; the chain then sends the signal to the human review queue.
 */
import { z } from 'zod';
import type { JudgeDefinitionInput } from '../judges/judge-identity.ts';
import type { ChatMessage, ModelsPort, ToolDefinition } from '../ports/models.ts';
import type { Taxonomy } from './taxonomy/taxonomy.ts';

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const JUDGE_TOOL = 'record_failure_modes';
/** Attempts at a valid answer (the first included). */
export const JUDGE_MAX_ATTEMPTS = 3;
/** Characters of the comment and of the trajectory the judge sees. */
export const JUDGE_COMMENT_CHARS = 8_000;
export const JUDGE_TRAJECTORY_CHARS = 12_000;

export interface JudgeInput {
  comment?: string;
  trajectory?: string;
  rating: string;
  outcome?: string;
  signalKind: string;
}

export interface JudgeVerdict {
  modes: { mode: string; severity: Severity }[];
  /** The quoted span, verified to occur in `evidenceSource`'s text; '' when no mode was named. */
  evidence: string;
  evidenceSource: 'comment' | 'trajectory';
  confidence: number;
  rationale?: string;
}

export type JudgeFailure = 'malformed' | 'unknown-mode' | 'evidence-not-found' | 'no-answer';

export type JudgeResult =
  | { ok: true; verdict: JudgeVerdict; attempts: number; model: string }
  | { ok: false; reason: JudgeFailure; message: string; attempts: number; model: string };

const Answer = z.object({
  modes: z.array(z.object({ mode: z.string().min(1), severity: z.enum(SEVERITIES) })).max(8),
  evidence: z.string().max(4000).default(''),
  evidenceSource: z.enum(['comment', 'trajectory']).default('comment'),
  confidence: z.number().min(0).max(1),
  rationale: z.string().max(4000).optional(),
});

export function judgeTool(taxonomy: Taxonomy): ToolDefinition {
  return {
    name: JUDGE_TOOL,
    description: 'Record the failure modes this signal shows, with evidence quoted verbatim from the comment or trajectory.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['modes', 'evidence', 'evidenceSource', 'confidence'],
      properties: {
        modes: {
          type: 'array',
          description: 'The failure modes shown; empty when the signal shows none (praise, neutral).',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['mode', 'severity'],
            properties: { mode: { type: 'string', enum: taxonomy.modes.map((m) => m.id) }, severity: { type: 'string', enum: [...SEVERITIES] } },
          },
        },
        evidence: { type: 'string', description: 'A span copied exactly from the comment or the trajectory that shows the mode(s).' },
        evidenceSource: { type: 'string', enum: ['comment', 'trajectory'] },
        confidence: { type: 'number', minimum: 0, maximum: 1, description: 'How likely your labels are exactly right.' },
        rationale: { type: 'string' },
      },
    },
  };
}

/** The failure-mode chain's judge in the judge registry (`lib/judges/registry/`): one name, a version per definition. */
export const FAILURE_MODE_JUDGE = 'failure-mode';
/** The decoding the chain's judge asks with (part of its identity). */
const JUDGE_SAMPLING = { temperature: 0 } as const;

/**
 * The judge the chain runs, as the registry identifies it: the model, the system prompt, the tool's parameters as the
 * output schema, the decoding and the taxonomy version. Any of them changing (a new model, a taxonomy version with
 * other modes) is a new version of `failure-mode`.
 *
 * @example
 * const { ref } = await registerJudge(ports, failureModeJudgeDefinition(judge.id, taxonomy));
 */
export function failureModeJudgeDefinition(modelId: string, taxonomy: Taxonomy): JudgeDefinitionInput {
  return {
    name: FAILURE_MODE_JUDGE,
    kind: 'failure-mode',
    model: modelId,
    prompt: systemPrompt(taxonomy),
    decoding: { ...JUDGE_SAMPLING },
    outputSchema: judgeTool(taxonomy).parameters,
    taxonomyVersion: taxonomy.version,
    description: 'The failure-mode chain’s LLM judge: labels an unsure signal with modes of the taxonomy, a severity each and quoted evidence.',
  };
}

function systemPrompt(taxonomy: Taxonomy): string {
  const modes = taxonomy.modes
    .map((m) => `- ${m.id} (${m.name}): ${m.definition}\n  e.g. ${m.examples.slice(0, 2).map((e) => JSON.stringify(e)).join('; ')}`)
    .join('\n');
  return [
    `You label user feedback about an AI coding agent with failure modes from taxonomy version ${taxonomy.version}.`,
    'Modes:',
    modes,
    `Answer only by calling ${JUDGE_TOOL}. Use only the mode ids above. Quote the evidence exactly as it appears.`,
  ].join('\n');
}

/** Collapses whitespace, so a quote that re-wraps lines still counts as occurring. */
export function normalizeSpan(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Whether `evidence` occurs in `text` (whitespace-insensitive, case-sensitive). */
export function evidenceOccurs(evidence: string, text: string | undefined): boolean {
  if (text === undefined) return false;
  const e = normalizeSpan(evidence);
  return e !== '' && normalizeSpan(text).includes(e);
}

/**
 * Asks the judge, checking each answer; up to `maxAttempts` answers.
 *
 * @example
 * const r = await judgeSignal(model, taxonomy, { comment: 'it rewrote every file', rating: 'down', signalKind: 'comment' });
 * if (r.ok) console.log(r.verdict.modes, r.verdict.evidence);
 */
export async function judgeSignal(model: ModelsPort, taxonomy: Taxonomy, input: JudgeInput, maxAttempts = JUDGE_MAX_ATTEMPTS): Promise<JudgeResult> {
  const live = new Set(taxonomy.modes.map((m) => m.id));
  const comment = input.comment?.slice(0, JUDGE_COMMENT_CHARS);
  const trajectory = input.trajectory?.slice(0, JUDGE_TRAJECTORY_CHARS);
  const parts = [`Signal: ${input.signalKind}; rating: ${input.rating}${input.outcome ? `; outcome: ${input.outcome}` : ''}.`];
  parts.push(comment !== undefined ? `Comment:\n<<<\n${comment}\n>>>` : 'No comment.');
  if (trajectory !== undefined) parts.push(`Trajectory (excerpt):\n<<<\n${trajectory}\n>>>`);
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt(taxonomy) },
    { role: 'user', content: parts.join('\n\n') },
  ];
  const tools = [judgeTool(taxonomy)];
  let last: { reason: JudgeFailure; message: string } = { reason: 'no-answer', message: 'no answer' };
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const reply = await model.chat({ messages, tools, sampling: { ...JUDGE_SAMPLING }, returnTokens: false });
    const call = reply.message.toolCalls.find((c) => c.name === JUDGE_TOOL) ?? reply.message.toolCalls[0];
    const raw = call ? call.arguments : reply.message.content;
    const checked = check(raw, live, comment, trajectory);
    if (checked.ok) return { ok: true, verdict: checked.verdict, attempts: attempt, model: model.id };
    last = checked;
    messages.push({ role: 'assistant', content: reply.message.content, ...(call ? { toolCalls: [call] } : {}) });
    const correction = `Your answer was refused: ${checked.message}. Call ${JUDGE_TOOL} again with valid JSON arguments.`;
    messages.push(call ? { role: 'tool', toolCallId: call.id, name: call.name, content: correction, isError: true } : { role: 'user', content: correction });
  }
  return { ok: false, ...last, attempts: maxAttempts, model: model.id };
}

function check(
  raw: string,
  live: Set<string>,
  comment: string | undefined,
  trajectory: string | undefined,
): { ok: true; verdict: JudgeVerdict } | { ok: false; reason: JudgeFailure; message: string } {
  if (raw.trim() === '') return { ok: false, reason: 'no-answer', message: `no ${JUDGE_TOOL} call and no content` };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    return { ok: false, reason: 'malformed', message: `arguments are not JSON (${(e as Error).message})` };
  }
  const parsed = Answer.safeParse(json);
  if (!parsed.success) {
    return { ok: false, reason: 'malformed', message: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  }
  const a = parsed.data;
  const unknown = a.modes.map((m) => m.mode).filter((m) => !live.has(m));
  if (unknown.length > 0) {
    return { ok: false, reason: 'unknown-mode', message: `unknown mode(s) ${unknown.join(', ')}; valid: ${[...live].join(', ')}` };
  }
  const modes = [...new Map(a.modes.map((m) => [m.mode, m])).values()];
  if (modes.length > 0) {
    const text = a.evidenceSource === 'trajectory' ? trajectory : comment;
    if (!evidenceOccurs(a.evidence, text)) {
      return { ok: false, reason: 'evidence-not-found', message: `evidence ${JSON.stringify(a.evidence.slice(0, 200))} does not occur in the ${a.evidenceSource}` };
    }
  }
  return {
    ok: true,
    verdict: {
      modes,
      evidence: modes.length > 0 ? normalizeSpan(a.evidence) : '',
      evidenceSource: a.evidenceSource,
      confidence: a.confidence,
      ...(a.rationale !== undefined ? { rationale: a.rationale } : {}),
    },
  };
}
