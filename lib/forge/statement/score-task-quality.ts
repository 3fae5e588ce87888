/**
 * The quality rubric: a model scores a forged task on two axes, 1 to 5 — is it solvable from what the agent sees
 * (statement, signatures, visible tests), and is the removed code one coherent feature — with a reason. The judge
 * sees the removed lines (it must, to judge coherence); the agent never sees this prompt. Without a model, or when
 * the model gives no valid answer, the score is null with the reason.
 */
import { z } from 'zod';
import type { ChatMessage, ModelsPort, SamplingParams, ToolDefinition } from '../../ports/models.ts';
import type { Candidate, FailingTest, TaskQualityScore } from '../candidate.ts';
import { failingTestsOf, removalSummary, testList } from './statement-prompt.ts';
import { removedCodeLines } from './find-leaks.ts';

export interface ScoreQualityOptions {
  statement: string;
  failingTests: Array<string | FailingTest>;
  model?: ModelsPort;
  /** Tries before giving up on a malformed answer. Default 2. */
  maxAttempts?: number;
  sampling?: SamplingParams;
}

export type TaskQualityResult = { score: TaskQualityScore; model: string } | { score: null; reason: string };

const Score = z.object({
  solvableFromVisible: z.coerce.number().int().min(1).max(5),
  coherentFeature: z.coerce.number().int().min(1).max(5),
  reason: z.string().min(1),
});

const SUBMIT: ToolDefinition = {
  name: 'submit_scores',
  description: 'Submit the rubric scores for the task.',
  parameters: {
    type: 'object',
    properties: {
      solvableFromVisible: { type: 'integer', minimum: 1, maximum: 5, description: 'Can a competent engineer rebuild the feature from the statement, signatures and visible tests alone? 5 = clearly.' },
      coherentFeature: { type: 'integer', minimum: 1, maximum: 5, description: 'Is the removed code one coherent feature rather than an arbitrary slice? 5 = clearly one feature.' },
      reason: { type: 'string', description: 'One or two sentences explaining the scores.' },
    },
    required: ['solvableFromVisible', 'coherentFeature', 'reason'],
  },
};

const SYSTEM = [
  'You review training tasks for coding agents. Each task removed a feature from a repository; the agent sees the statement, the repository without the feature, and the tests.',
  'Score two things from 1 (bad) to 5 (good): solvableFromVisible — can the feature be rebuilt from what the agent sees; coherentFeature — is the removed code one coherent feature.',
  'Call submit_scores, or answer with only a JSON object {"solvableFromVisible": n, "coherentFeature": n, "reason": "..."}.',
].join('\n');

function parseAnswer(text: string): TaskQualityScore | string {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return 'no JSON object in the answer';
  let raw: unknown;
  try {
    raw = JSON.parse(text.slice(start, end + 1));
  } catch (e) {
    return `malformed JSON: ${(e as Error).message}`;
  }
  const parsed = Score.safeParse(raw);
  return parsed.success ? parsed.data : `invalid scores: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
}

/**
 * Scores a task with the rubric.
 *
 * @example
 * const q = await scoreTaskQuality(candidate, { statement, failingTests: failToPass, model });
 * if (q.score) console.log(q.score.solvableFromVisible, q.score.coherentFeature, q.score.reason);
 */
export async function scoreTaskQuality(candidate: Candidate, options: ScoreQualityOptions): Promise<TaskQualityResult> {
  if (!options.model) return { score: null, reason: 'no model configured' };
  const tests = failingTestsOf(options.failingTests);
  const user = [
    `## Statement the agent sees\n${options.statement}`,
    `## Removed (${candidate.strategy})\n${removalSummary(candidate)}`,
    `## Signatures visible to the agent\n\`\`\`\n${candidate.context.signatures.join('\n')}\n\`\`\``,
    `## Removed lines (hidden from the agent)\n\`\`\`\n${removedCodeLines(candidate).slice(0, 200).join('\n')}\n\`\`\``,
    `## Failing tests\n${testList(tests, true) || '(none)'}`,
  ].join('\n\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: user },
  ];
  let lastReason = 'no answer';
  for (let attempt = 1; attempt <= (options.maxAttempts ?? 2); attempt++) {
    let reply;
    try {
      reply = await options.model.chat({ messages, tools: [SUBMIT], sampling: { temperature: 0, maxTokens: 400, ...options.sampling }, returnTokens: false });
    } catch (e) {
      return { score: null, reason: `model error: ${(e as Error).name}: ${(e as Error).message}` };
    }
    const call = reply.message.toolCalls.find((c) => c.name === SUBMIT.name);
    const answer = parseAnswer(call ? call.arguments : reply.message.content);
    if (typeof answer !== 'string') return { score: answer, model: options.model.id };
    lastReason = answer;
    messages.push({ role: 'assistant', content: reply.message.content }, { role: 'user', content: `Your answer could not be used (${answer}). Answer with only the JSON object.` });
  }
  return { score: null, reason: `no valid scores from the model: ${lastReason}` };
}
