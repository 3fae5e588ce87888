/**
 * The task statement: with a model, the issue a user would file (a feature request or bug report drawn from the
 * failing tests' intent), checked by `statementProblems` — no removed line or name only the removed code has, no value
 * the tests assert, no word of what was deleted or where — and on failure sent back with the problems named, up to
 * `maxRewrites` times; then, or without a model, the template (`template-statement.ts`). Every rejected draft is
 * returned with its reason, and the statement is remembered for `scoreTaskQuality` (its source and rewrites).
 */
import { FlywheelError } from '../../errors.ts';
import type { ChatMessage, ModelsPort, SamplingParams } from '../../ports/models.ts';
import type { Candidate, FailingTest } from '../candidate.ts';
import { withTestSources } from './failing-test-sources.ts';
import { hiddenEvidence } from './hidden-evidence.ts';
import { STATEMENT_SYSTEM_PROMPT, failingTestsOf, statementPrompt } from './statement-prompt.ts';
import { statementProblems, type StatementProblem } from './statement-problems.ts';
import { templateStatement } from './template-statement.ts';
import { rememberStatement } from './written-statements.ts';

/** Error name thrown when even the template carries removed code (a bug in the template, never a model's fault). */
export const TEMPLATE_LEAK_ERROR = 'Flywheel.ForgeTemplateLeak';

export class TemplateLeakError extends FlywheelError {
  constructor(message: string) {
    super(TEMPLATE_LEAK_ERROR, message);
  }
}

export interface WriteStatementOptions {
  /** The tests that fail on the broken tree (ids, or ids with their source). */
  failingTests: Array<string | FailingTest>;
  model?: ModelsPort;
  /** The checkout the test ids are relative to: tests given without their source are read from it. */
  repoDir?: string;
  /** Rewrite requests after the first draft before the template. Default 2. */
  maxRewrites?: number;
  /** Model drafts in all (the first and its rewrites); overrides `maxRewrites`. */
  maxAttempts?: number;
  sampling?: SamplingParams;
  signal?: AbortSignal;
}

export interface TaskStatement {
  statement: string;
  source: 'model' | 'template';
  /** The model's id, when it wrote the statement. */
  model?: string;
  /** Rewrite requests sent to the model (the accepted draft's, or all of them before the template). */
  rewrites: number;
  /** Drafts rejected on the way (problems found, empty answers, model errors), in order. */
  rejected: Array<{ attempt: number; reason: string }>;
}

/** The reply without a code fence wrapped round all of it (```` ```markdown ````, ```` ```text ````, bare ```` ``` ````). */
function stripFence(text: string): string {
  const t = text.trim();
  const m = /^```[\w-]*[ \t]*\n([\s\S]*)\n```$/.exec(t);
  return (m ? m[1]! : t).trim();
}

/** The rejection reason as recorded: a removed line keeps the leak check's wording, the rest say what was found. */
function rejectionReason(problems: StatementProblem[]): string {
  return problems
    .map((p) => {
      if (p.kind === 'removed-line') return `leak: ${p.found.map((l) => `the text contains a line of the removed code: "${l.length > 120 ? `${l.slice(0, 117)}...` : l}"`).join('; ')}`;
      if (p.kind === 'empty') return 'empty statement';
      return `${p.kind}: ${p.found.join(', ') || p.message}`;
    })
    .join('; ');
}

/**
 * Writes the statement for a candidate.
 *
 * @example
 * const { statement, source, rewrites, rejected } = await writeTaskStatement(candidate, { failingTests: failToPass, model, repoDir });
 */
export async function writeTaskStatement(candidate: Candidate, options: WriteStatementOptions): Promise<TaskStatement> {
  const tests = await withTestSources(failingTestsOf(options.failingTests), options.repoDir);
  const evidence = hiddenEvidence(candidate, tests);
  const rejected: TaskStatement['rejected'] = [];
  const done = (written: TaskStatement): TaskStatement => {
    rememberStatement(candidate, { ...written, tests });
    return written;
  };
  let rewrites = 0;
  if (options.model) {
    const attempts = options.maxAttempts ?? (options.maxRewrites ?? 2) + 1;
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
      const problems = statementProblems(draft, candidate, tests, evidence);
      if (problems.length === 0) return done({ statement: draft, source: 'model', model: options.model.id, rewrites, rejected });
      rejected.push({ attempt, reason: rejectionReason(problems) });
      if (attempt === attempts) break;
      // The rewrite request names the problems; a draft that quoted the removed code is withheld, so no prompt carries it.
      const quotedCode = problems.some((p) => p.kind === 'removed-line');
      messages.push(
        { role: 'assistant', content: quotedCode ? '(draft withheld: it quoted the implementation)' : draft },
        { role: 'user', content: `That issue cannot be used: ${problems.map((p) => p.message).join('; ')}. Rewrite it as the user would, following the rules.` },
      );
      rewrites++;
    }
  }
  const statement = templateStatement(candidate, tests);
  const leaks = statementProblems(statement, candidate, tests, evidence).filter((p) => p.kind === 'removed-line');
  if (leaks.length > 0) throw new TemplateLeakError(`template statement for ${candidate.id} leaks: ${rejectionReason(leaks)}`);
  return done({ statement, source: 'template', rewrites, rejected });
}
