/**
 * The task statement: written by a model through the models port from the removed code's signatures, docs and the
 * failing tests, checked for leaks (a statement containing a non-trivial line of the removed code is rejected and
 * the model asked again), with a deterministic template when there is no model, the model is down, or every draft
 * leaked. Every rejected draft is returned with its reason.
 */
import type { ChatMessage, ModelsPort, SamplingParams } from '../../ports/models.ts';
import type { Candidate, FailingTest } from '../candidate.ts';
import { findLeaks } from './find-leaks.ts';
import { STATEMENT_SYSTEM_PROMPT, failingTestsOf, statementPrompt, templateStatement } from './statement-prompt.ts';

export interface WriteStatementOptions {
  /** The tests that fail on the broken tree (ids, or ids with their source). */
  failingTests: Array<string | FailingTest>;
  model?: ModelsPort;
  /** Model drafts tried before the template. Default 2. */
  maxAttempts?: number;
  sampling?: SamplingParams;
  signal?: AbortSignal;
}

export interface TaskStatement {
  statement: string;
  source: 'model' | 'template';
  /** The model's id, when it wrote the statement. */
  model?: string;
  /** Drafts rejected on the way (leaks, empty answers, model errors), in order. */
  rejected: Array<{ attempt: number; reason: string }>;
}

function stripFence(text: string): string {
  const t = text.trim();
  const m = /^```(?:markdown|md)?\n([\s\S]*)\n```$/.exec(t);
  return (m ? m[1]! : t).trim();
}

/**
 * Writes the statement for a candidate.
 *
 * @example
 * const { statement, source, rejected } = await writeTaskStatement(candidate, { failingTests: failToPass, model });
 */
export async function writeTaskStatement(candidate: Candidate, options: WriteStatementOptions): Promise<TaskStatement> {
  const tests = failingTestsOf(options.failingTests);
  const allowed = [...candidate.context.signatures, ...candidate.context.docComments, ...tests.map((t) => t.body ?? '')];
  const rejected: TaskStatement['rejected'] = [];
  if (options.model) {
    const attempts = options.maxAttempts ?? 2;
    const messages: ChatMessage[] = [
      { role: 'system', content: STATEMENT_SYSTEM_PROMPT },
      { role: 'user', content: statementPrompt(candidate, tests) },
    ];
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let draft: string;
      try {
        const reply = await options.model.chat({ messages, sampling: { temperature: 0.2, maxTokens: 800, ...options.sampling }, returnTokens: false, ...(options.signal ? { signal: options.signal } : {}) });
        draft = stripFence(reply.message.content);
      } catch (e) {
        rejected.push({ attempt, reason: `model error: ${(e as Error).name}: ${(e as Error).message}` });
        break;
      }
      if (draft.length === 0) {
        rejected.push({ attempt, reason: 'empty statement' });
        continue;
      }
      const leaks = findLeaks(draft, candidate, { allowed });
      if (leaks.length === 0) return { statement: draft, source: 'model', model: options.model.id, rejected };
      rejected.push({ attempt, reason: `leak: ${leaks.map((l) => l.reason).join('; ')}` });
      // Ask again without repeating the leaked line (the prompt must never carry removed code).
      messages.push({ role: 'assistant', content: '(draft withheld: it quoted the removed implementation)' }, {
        role: 'user',
        content: `That draft was rejected: it contained ${leaks.length} line(s) of the removed implementation. Describe the behaviour in prose only, without any code from the implementation.`,
      });
    }
  }
  const statement = templateStatement(candidate, tests);
  const leaks = findLeaks(statement, candidate, { allowed });
  if (leaks.length > 0) throw new Error(`template statement for ${candidate.id} leaks: ${leaks[0]!.reason}`);
  return { statement, source: 'template', rejected };
}
