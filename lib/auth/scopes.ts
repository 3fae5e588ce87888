/**
 * API key scopes. Each route of `lib/api/routes.ts` declares the one it needs:
 * - `ingest`: post feedback and reports (product clients); nothing else;
 * - `read`: read feedback, suites, checkpoints, results, sweeps, failure modes, judges and their calibrations, annotation
 *   queues and gold sets;
 * - `admin`: register suites, checkpoints and judges, start sweeps, label and approve, promote clusters into modes, promote and retire judges;
 *   queue and label annotations, create gold sets, calibrate judges and check their drift; implies `read`.
 */
export const SCOPES = ['ingest', 'read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** A tenant name: what partitions data (`T#<tenant>#…` records, `tenants/<tenant>/…` blobs). */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** The tenant whose records and blobs keep the un-prefixed keys (data written before tenants existed). */
export const DEFAULT_TENANT = 'default';

/** Whether a key holding `granted` may call a route that needs `required`. */
export function hasScope(granted: readonly Scope[], required: Scope): boolean {
  if (granted.includes(required)) return true;
  return required === 'read' && granted.includes('admin');
}

/** The scope a word names, or undefined. */
export function scopeOf(word: string): Scope | undefined {
  return SCOPES.find((s) => s === word);
}

/** `ingest,read` → `['ingest', 'read']`; throws naming the unknown scope. */
export function parseScopes(text: string | readonly string[]): Scope[] {
  const parts = (typeof text === 'string' ? text.split(',') : [...text]).map((s) => s.trim()).filter((s) => s !== '');
  const out: Scope[] = [];
  for (const p of parts) {
    const scope = scopeOf(p);
    if (!scope) throw new Error(`unknown scope ${JSON.stringify(p)}: use ${SCOPES.join(', ')}`);
    if (!out.includes(scope)) out.push(scope);
  }
  if (out.length === 0) throw new Error(`no scope given: use one or more of ${SCOPES.join(', ')}`);
  return out;
}

export function isTenant(value: unknown): value is string {
  return typeof value === 'string' && TENANT_PATTERN.test(value);
}
