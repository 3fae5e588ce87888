import type { z } from 'zod';
import { toFieldIssues } from './field-issues.ts';
import { ValidationError } from '../errors.ts';

/**
 * Validates `input` (a request body, query or path parameters; absent counts as `{}`) with a schema; throws `Flywheel.ValidationError` whose message names every offending
 * field (`serving.model: …; artifactKey: …`), so a CLI user sees the whole problem in one line.
 *
 * @example
 * const input = parseInput(CheckpointInput, body, 'checkpoint');
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issues = toFieldIssues(r.error.issues);
  throw new ValidationError(`Invalid ${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}
