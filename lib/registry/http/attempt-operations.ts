/** OpenAPI description of the console's attempt reads, merged into `OPERATIONS` of `lib/api/openapi.ts`. */
import { errorDoc, READ_ERRORS, type OperationDoc } from '../../api/operation-docs.ts';
import { AttemptDetailSchema, AttemptIdParams, AttemptPageSchema, GetAttemptQuery, ListAttemptsQuery } from '../attempt-schemas.ts';

export const ATTEMPT_READ_OPERATIONS: Record<string, OperationDoc> = {
  listAttempts: {
    summary: "Eval attempts of sweeps, newest sweep first, filtered by sweep, checkpoint, suite, task, mode and outcome; a filtered page may be short while `nextCursor` says more follow",
    request: { query: ListAttemptsQuery },
    responses: { 200: { description: 'A page of attempts.', content: { 'application/json': { schema: AttemptPageSchema } } }, ...READ_ERRORS },
  },
  getAttempt: {
    summary: 'One attempt: trajectory (a page of steps, long texts cut with a marker), diff, test outcomes, integrity flags, judge verdicts, decision records, tries',
    request: { params: AttemptIdParams, query: GetAttemptQuery },
    responses: {
      200: { description: 'The attempt.', content: { 'application/json': { schema: AttemptDetailSchema } } },
      404: errorDoc('No attempt with this id.'),
      ...READ_ERRORS,
    },
  },
};
