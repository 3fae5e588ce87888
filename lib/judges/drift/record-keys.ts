/**
 * The record layout of the drift watch.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | (judge, person) pair of one labelled drift item | `JUDGEDRIFT#<name>@<version>` | `PAIR#<labelledAt>#<itemId>` | `JUDGEDRIFT#<name>@<version>#<reason>` / `PAIR#<labelledAt>#<itemId>` | |
 * | local drift watch's event cursor | `JUDGESLOCAL` | `DRIFTCURSOR` | | |
 *
 * Pairs are per judge version, newest last; gsi1 splits them by why the item was queued, so the rolling window is one
 * descending query of one version's `production-sample` pairs (the unbiased sample), and the disagreements are read
 * apart.
 */
import type { JudgeRef } from '../judge-identity.ts';

export const driftKeys = {
  pairs: (ref: JudgeRef) => `JUDGEDRIFT#${ref.name}@${ref.version}`,
  pairPrefix: 'PAIR#',
  pair: (ref: JudgeRef, labelledAt: string, itemId: string, reason: string) => ({
    pk: `JUDGEDRIFT#${ref.name}@${ref.version}`,
    sk: `PAIR#${labelledAt}#${itemId}`,
    gsi1pk: `JUDGEDRIFT#${ref.name}@${ref.version}#${reason}`,
    gsi1sk: `PAIR#${labelledAt}#${itemId}`,
  }),
  /** gsi1 partition of one version's pairs queued for one reason. */
  pairsByReason: (ref: JudgeRef, reason: string) => `JUDGEDRIFT#${ref.name}@${ref.version}#${reason}`,
  localEventCursor: { pk: 'JUDGESLOCAL', sk: 'DRIFTCURSOR' },
} as const;

/** The annotation queue of a judge's drift items. */
export function driftQueue(judgeName: string): string {
  return `drift:${judgeName}`;
}
