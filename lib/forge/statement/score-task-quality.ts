/**
 * The quality of a forged task's statement, stored with the task (`metadata.forge.quality`). Always, without a model:
 * `leakage` (the share of the removed lines, removed-only names and asserted test values the statement carries, with
 * the list) and a heuristic `clarity` (1–5), plus who wrote the statement (`source`) and after how many `rewrites`.
 * With a model, the rubric on three axes, 1 to 5 — is it solvable from what the agent sees (statement, signatures,
 * visible tests), is the removed code one coherent feature, is the statement a clear user's issue — with a reason;
 * the model's clarity then replaces the heuristic one. The judge sees the removed lines (it must, to judge
 * coherence); the agent never sees this prompt. When the model gives no valid answer, `score` is null with the reason.
 */
import { z } from 'zod';
import type { ChatMessage, ModelsPort, SamplingParams, ToolDefinition } from '../../ports/models.ts';
import type { Candidate, FailingTest, TaskQualityScore } from '../candidate.ts';
import { failingTestsOf, removalSummary, testList } from './statement-prompt.ts';
import { removedCodeLines } from './find-leaks.ts';
import { withTestSources } from './failing-test-sources.ts';
import { statementClarity, statementLeakage, type ClarityScore, type LeakageScore } from './statement-scores.ts';
import { templateStatement } from './template-statement.ts';
import { writtenStatement } from './written-statements.ts';

export interface ScoreQualityOptions {
  statement: string;
  failingTests: Array<string | FailingTest>;
  model?: ModelsPort;
  /** Tries before giving up on a malformed answer. Default 2. */
  maxAttempts?: number;
  sampling?: SamplingParams;
  /** The checkout the test ids are relative to: tests given without their source are read from it. */
  repoDir?: string;
  /** Who wrote the statement; by default what `writeTaskStatement` recorded for this candidate and text. */
  written?: { source: 'model' | 'template'; rewrites: number };
}

/** The deterministic scores, and who wrote the statement. */
export interface StatementQuality extends LeakageScore, ClarityScore {
  /** `model` when the rubric's clarity is used, `heuristic` otherwise. */
  clarityBy: 'model' | 'heuristic';
  source: 'model' | 'template';
  rewrites: number;
}

export type TaskQualityResult = StatementQuality & ({ score: TaskQualityScore; model: string } | { score: null; reason: string });

const Score = z.object({
  solvableFromVisible: z.coerce.number().int().min(1).max(5),
  coherentFeature: z.coerce.number().int().min(1).max(5),
  clarity: z.coerce.number().int().min(1).max(5).optional(),
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
      clarity: { type: 'integer', minimum: 1, maximum: 5, description: 'Does the statement read like a clear issue from a user (what they tried, expected and saw), naming the public API, without giving the implementation away? 5 = clearly.' },
      reason: { type: 'string', description: 'One or two sentences explaining the scores.' },
    },
    required: ['solvableFromVisible', 'coherentFeature', 'clarity', 'reason'],
  },
};

const SYSTEM = [
  'You review training tasks for coding agents. Each task removed a feature from a repository; the agent sees the statement, the repository without the feature, and the tests.',
  'Score three things from 1 (bad) to 5 (good): solvableFromVisible — can the feature be rebuilt from what the agent sees; coherentFeature — is the removed code one coherent feature; clarity — is the statement a clear issue a user would write (what they tried, expected and saw), naming the public API, without giving the implementation away.',
  'Call submit_scores, or answer with only a JSON object {"solvableFromVisible": n, "coherentFeature": n, "clarity": n, "reason": "..."}.',
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
  if (!parsed.success) return `invalid scores: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
  const { clarity, ...rest } = parsed.data;
  return clarity === undefined ? rest : { ...rest, clarity };
}

/** Who wrote the statement: as told, as the writer recorded, the template when it is the template's text, else the model if one is configured. */
function authorship(candidate: Candidate, options: ScoreQualityOptions, tests: FailingTest[]): { source: 'model' | 'template'; rewrites: number } {
  if (options.written) return options.written;
  const record = writtenStatement(candidate, options.statement);
  if (record) return { source: record.source, rewrites: record.rewrites };
  const template = options.statement === templateStatement(candidate, tests);
  return { source: template || !options.model ? 'template' : 'model', rewrites: 0 };
}

/**
 * Scores a task's statement: leakage and clarity always, the rubric with a model.
 *
 * @example
 * const q = await scoreTaskQuality(candidate, { statement, failingTests: failToPass, model });
 * console.log(q.leakage, q.clarity, q.source, q.rewrites);
 * if (q.score) console.log(q.score.solvableFromVisible, q.score.coherentFeature, q.score.reason);
 */
export async function scoreTaskQuality(candidate: Candidate, options: ScoreQualityOptions): Promise<TaskQualityResult> {
  const given = failingTestsOf(options.failingTests);
  const record = writtenStatement(candidate, options.statement);
  // The writer's tests carry the sources it read; the same ids need not be read again.
  const tests = await withTestSources(record && record.tests.map((t) => t.id).join('\n') === given.map((t) => t.id).join('\n') ? record.tests : given, options.repoDir);
  const heuristic = statementClarity(options.statement, candidate);
  const base: StatementQuality = { ...statementLeakage(options.statement, candidate, tests), ...heuristic, clarityBy: 'heuristic', ...authorship(candidate, options, tests) };
  if (!options.model) return { ...base, score: null, reason: 'no model configured' };
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
      return { ...base, score: null, reason: `model error: ${(e as Error).name}: ${(e as Error).message}` };
    }
    const call = reply.message.toolCalls.find((c) => c.name === SUBMIT.name);
    const answer = parseAnswer(call ? call.arguments : reply.message.content);
    if (typeof answer !== 'string') return { ...base, ...(answer.clarity !== undefined ? { clarity: answer.clarity, clarityBy: 'model' as const } : {}), score: answer, model: options.model.id };
    lastReason = answer;
    messages.push({ role: 'assistant', content: reply.message.content }, { role: 'user', content: `Your answer could not be used (${answer}). Answer with only the JSON object.` });
  }
  return { ...base, score: null, reason: `no valid scores from the model: ${lastReason}` };
}
