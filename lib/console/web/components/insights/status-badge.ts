/**
 * The badge class (`styles.css`) of a status word, so every insights page colours a status the same way: good ends
 * green, failures red, what still runs blue, what waits or was stopped amber.
 *
 * @example
 * <span class={`badge ${statusBadge(run.status)}`}>{run.status}</span>
 */
const GOOD = new Set(['passed', 'succeeded', 'active', 'decided']);
const BAD = new Set(['failed', 'infrastructure-error', 'retired']);
const BUSY = new Set(['running', 'training', 'building-dataset', 'registering', 'evaluating', 'queued']);

export function statusBadge(status: string): string {
  if (GOOD.has(status)) return 'badge-good';
  if (BAD.has(status)) return 'badge-bad';
  if (BUSY.has(status)) return 'badge-busy';
  if (status === 'saturated' || status === 'stopped' || status === 'ungraded') return 'badge-warn';
  return 'badge-plain';
}
