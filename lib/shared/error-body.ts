/**
 * The body of every error answer of the HTTP API (`errorResult` in `lib/api/json-response.ts`), as the OpenAPI
 * document describes it: the namespaced error name, a message, and for a `Flywheel.ValidationError` the offending
 * fields (`FieldIssue`, `./field-issues.ts`). One schema for the feedback, registry, sweeps and modes routes alike.
 *
 * @example
 * const errorDoc = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export const ValidationIssue = z.object({ path: z.string(), message: z.string() }).openapi('ValidationIssue');

export const ErrorBody = z
  .object({
    error: z.string().openapi({ example: 'Flywheel.ValidationError' }),
    message: z.string(),
    issues: z.array(ValidationIssue).optional(),
  })
  .openapi('Error');
