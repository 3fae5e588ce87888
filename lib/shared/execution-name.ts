/**
 * A state machine execution name made from an id (a checkpoint's, say): `<prefix>-<slug>-<8 hex>`, the slug the id's
 * letters, digits and dashes (cut to `slugMax`), the hash the id's own so two ids that slug alike stay apart. Execution
 * names allow letters, digits, `-` and `_` only, at most 80 characters, and a name is the execution's idempotency key:
 * the same id always names the same execution.
 *
 * @example
 * executionNameFor('checkpoint', 'coder-7b:step-1200', 56); // 'checkpoint-coder-7b-step-1200-1a2b3c4d'
 */
import { createHash } from 'node:crypto';

export function executionNameFor(prefix: string, id: string, slugMax: number): string {
  const slug = id.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, slugMax);
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 8);
  return `${prefix}-${slug ? `${slug}-` : ''}${hash}`;
}
