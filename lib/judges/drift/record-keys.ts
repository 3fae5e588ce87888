/**
 * The record layout of the drift watch.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | (judge, person) pair of one labelled drift item | `JUDGEDRIFT#<name>@<version>` | `PAIR#<labelledAt>#<itemId>` | | |
 * | local drift watch's event cursor | `JUDGESLOCAL` | `DRIFTCURSOR` | | |
 *
 * Pairs are per judge version, newest last: the rolling window is one descending query of one version's pairs.
 */
import type { JudgeRef } from '../judge-identity.ts';

export const driftKeys = {
  pairs: (ref: JudgeRef) => `JUDGEDRIFT#${ref.name}@${ref.version}`,
  pairPrefix: 'PAIR#',
  pair: (ref: JudgeRef, labelledAt: string, itemId: string) => ({ pk: `JUDGEDRIFT#${ref.name}@${ref.version}`, sk: `PAIR#${labelledAt}#${itemId}` }),
  localEventCursor: { pk: 'JUDGESLOCAL', sk: 'DRIFTCURSOR' },
} as const;

/** The annotation queue of a judge's drift items. */
export function driftQueue(judgeName: string): string {
  return `drift:${judgeName}`;
}
