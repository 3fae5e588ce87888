/**
 * Raising a notice: the one way a capability tells people something. A notice is stored first (so it can be listed,
 * acknowledged and answered), then delivered (`deliver-notice.ts`). A repeat of a dedup key whose notice is still open
 * or acknowledged folds into it (`occurrences` + 1, `lastSeenAt`) and is NOT delivered again; once that notice is
 * resolved, the next raise starts a new one. Two raises at once make one notice: the index item of the dedup key
 * (`NOTICEKEY#<dedupKey>`) is claimed with a conditional write, and repeats fold in with conditional writes too.
 *
 * Severity: an `alert` goes out at once; an `info` or `warning` raised inside the stage's quiet hours is stored with
 * `delivery.slack = 'deferred'` and `deferredUntil`, and the notices schedule delivers it after
 * (`deliver-deferred-notices.ts`). A decision notice stays `open` until one of its actions is answered.
 */
import { createHash } from 'node:crypto';
import { ConflictError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { deliverNotice, logNotice, noticeDeliveryOptionsFromEnv, type NoticeDeliveryOptions } from './deliver-notice.ts';
import { publicNotice, readStoredNotice, updateNotice } from './notice-store.ts';
import { quietUntil } from './quiet-hours.ts';
import { noticeIndexRecord, noticeRecord, type StoredNotice } from './record-codecs.ts';
import { noticeKeys } from './record-keys.ts';
import { RaiseNoticeInput, type NoticeRecord } from './schemas.ts';

export type { NoticeDeliveryOptions } from './deliver-notice.ts';

export interface RaiseNoticeResult {
  notice: NoticeRecord;
  /** False when the raise folded into an open notice of the same dedup key. */
  created: boolean;
  /** Whether this raise sent the notice out (to Slack or the bus); false for a repeat, a deferral, or no channel. */
  delivered: boolean;
}

export type RaiseNoticePorts = Pick<Ports, 'records'> & Partial<Pick<Ports, 'events' | 'now'>>;

/** An index claimed this long ago whose notice never appeared: its raiser died in between; the next raise takes over. */
const ORPHAN_CLAIM_MS = 60_000;
const MAX_TRIES = 2000;

/** The time-sortable id: `n-<createdAt ms, base36, 9 chars>-<8 hex of the dedup key's hash>`. */
export function noticeIdOf(createdAt: Date, dedupKey: string): string {
  const hash = createHash('sha256').update(dedupKey).digest('hex').slice(0, 8);
  return `n-${createdAt.getTime().toString(36).padStart(9, '0')}-${hash}`;
}

/**
 * @example
 * const { notice, created } = await raiseNotice(ports, {
 *   dedupKey: 'training.failed:run-7', kind: 'failure', severity: 'alert', title: 'Training run run-7 failed',
 *   text: 'OOM in step train (exit 137)', source: { capability: 'training', runKind: 'training-run', runId: 'run-7' },
 *   link: '/training/run-7',
 *   actions: [{ id: 'resume', label: 'Resume', style: 'primary', operation: { kind: 'resume-training-run', runId: 'run-7' } }],
 * });
 */
export async function raiseNotice(ports: RaiseNoticePorts, input: RaiseNoticeInput, options?: NoticeDeliveryOptions): Promise<RaiseNoticeResult> {
  const raised = parseInput(RaiseNoticeInput, input, 'notice');
  const opts = options ?? noticeDeliveryOptionsFromEnv();
  const now = ports.now?.() ?? new Date();
  const indexKey = noticeKeys.openByKey(raised.dedupKey);
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const index = noticeIndexRecord.decodeIfPresent(await ports.records.get(indexKey.pk, indexKey.sk));
    if (index) {
      const current = await readStoredNotice(ports.records, index.noticeId);
      if (!current) {
        // Claimed by a raiser that has not written its notice yet: wait for it, unless it died in between.
        if (now.getTime() - Date.parse(index.claimedAt) < ORPHAN_CLAIM_MS && attempt < MAX_TRIES - 1) {
          await pause(attempt);
          continue;
        }
      } else if (current.status !== 'resolved') {
        const folded: StoredNotice = {
          ...current,
          occurrences: current.occurrences + 1,
          lastSeenAt: later(current.lastSeenAt, now.toISOString()),
          revision: current.revision + 1,
        };
        const { written } = await ports.records.put(noticeRecord.encode(folded), { condition: { kind: 'unchanged', field: 'revision', value: current.revision } });
        if (written) return { notice: publicNotice(folded), created: false, delivered: false };
        continue;
      }
    }
    const created = await create(ports, raised, now, index?.noticeId, opts);
    if (created) return created;
  }
  throw new ConflictError(`Notice ${raised.dedupKey} could not be raised: too many concurrent writers`);
}

/** Claims the dedup key for a new notice, stores it and delivers it; undefined when another raiser claimed it first. */
async function create(
  ports: RaiseNoticePorts,
  raised: RaiseNoticeInput,
  now: Date,
  previousId: string | undefined,
  options: NoticeDeliveryOptions,
): Promise<RaiseNoticeResult | undefined> {
  let noticeId = noticeIdOf(now, raised.dedupKey);
  // A resolved notice of the same key created in this very millisecond: the next millisecond keeps ids unique.
  if (noticeId === previousId) noticeId = noticeIdOf(new Date(now.getTime() + 1), raised.dedupKey);
  const claim = await ports.records.put(noticeIndexRecord.encode({ dedupKey: raised.dedupKey, noticeId, claimedAt: now.toISOString() }), {
    condition: previousId ? { kind: 'unchanged', field: 'noticeId', value: previousId } : { kind: 'absent' },
  });
  if (!claim.written) return undefined;
  const deferredUntil = raised.severity === 'alert' ? undefined : quietUntil(now, options.quietHours);
  const at = now.toISOString();
  const stored: StoredNotice = {
    ...raised,
    noticeId,
    status: 'open',
    createdAt: at,
    lastSeenAt: at,
    occurrences: 1,
    delivery: deferredUntil
      ? { slack: 'deferred', topic: 'deferred', deferredUntil: deferredUntil.toISOString() }
      : { slack: 'not-configured', topic: 'not-configured' },
    revision: 0,
  };
  const put = await ports.records.put(noticeRecord.encode(stored), { condition: { kind: 'absent' } });
  if (!put.written) throw new ConflictError(`Notice ${noticeId} exists already`);
  logNotice(publicNotice(stored), options, deferredUntil ? { deferredUntil: deferredUntil.toISOString() } : {});
  if (deferredUntil) return { notice: publicNotice(stored), created: true, delivered: false };
  return { ...(await deliverAndRecord(ports, stored, options)), created: true };
}

/**
 * Delivers a stored notice and records where it went (over whatever folded in meanwhile).
 *
 * @example
 * const { notice, delivered } = await deliverAndRecord(ports, stored, options);
 */
export async function deliverAndRecord(
  ports: RaiseNoticePorts,
  stored: NoticeRecord,
  options: NoticeDeliveryOptions,
): Promise<{ notice: NoticeRecord; delivered: boolean }> {
  const delivery = await deliverNotice(ports, stored, options);
  const written = await updateNotice(ports.records, stored.noticeId, (n) => ({ ...n, delivery: { ...delivery } }));
  return { notice: publicNotice(written), delivered: delivery.slack === 'sent' || delivery.topic === 'sent' };
}

function later(a: string, b: string): string {
  return a > b ? a : b;
}

/** A short, growing pause while another raiser finishes writing the notice it claimed. */
function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(2 + attempt, 50)));
}
