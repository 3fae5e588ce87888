/**
 * The stall check (the notices schedule runs it every 5 minutes): every watched run with no heartbeat for its kind's
 * window (`notices.stallWindowsMinutes`) raises ONE stall notice (dedup key `stall:<runKind>:<runId>`, a link to the
 * run); the next heartbeat, or the run finishing, resolves it (`record-heartbeat.ts`).
 */
import type { NoticeSettings } from '../../config/stages.ts';
import { raiseNotice, type NoticeDeliveryOptions, type RaiseNoticePorts } from '../notices/raise-notice.ts';
import { resolveNotice } from '../notices/notice-store.ts';
import { heartbeatRecord, type HeartbeatWatch } from '../notices/record-codecs.ts';
import { heartbeatKeys } from '../notices/record-keys.ts';
import { RUN_KINDS, type RunKind } from './record-heartbeat.ts';

export interface StalledRunsCheck {
  /** `<runKind>:<runId>` of each run reported stalled by this check (a run still silent from before is not repeated). */
  stalled: string[];
  watched: number;
}

/** The console path of a run, for the stall notice's link. */
export function runLinkOf(runKind: string, runId: string): string {
  const id = encodeURIComponent(runId);
  if (runKind === 'training') return `/training/${id}`;
  if (runKind === 'sweep') return `/attempts?sweep=${id}`;
  if (runKind === 'derivation') return `/jobs?run=${id}`;
  return `/jobs?run=${id}`;
}

function windowOf(runKind: string, settings: Pick<NoticeSettings, 'stallWindowsMinutes'>): number {
  const kind: RunKind = (RUN_KINDS as readonly string[]).includes(runKind) ? (runKind as RunKind) : 'job';
  return settings.stallWindowsMinutes[kind];
}

/**
 * @example
 * const { stalled } = await checkStalledRuns(ports, STAGES.local.notices, noticeDeliveryOptionsFromEnv());
 */
export async function checkStalledRuns(
  ports: RaiseNoticePorts,
  settings: Pick<NoticeSettings, 'stallWindowsMinutes'>,
  options?: NoticeDeliveryOptions,
): Promise<StalledRunsCheck> {
  const now = ports.now?.() ?? new Date();
  const stalled: string[] = [];
  let watched = 0;
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi1', partition: heartbeatKeys.all, limit: 500, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const watch = heartbeatRecord.decode(item);
      watched++;
      const windowMinutes = windowOf(watch.runKind, settings);
      const silentMs = now.getTime() - Date.parse(watch.lastBeatAt);
      if (watch.stallNoticeId || silentMs < windowMinutes * 60_000) continue;
      if (await reportStall(ports, watch, windowMinutes, Math.floor(silentMs / 60_000), options)) stalled.push(`${watch.runKind}:${watch.runId}`);
    }
    cursor = page.cursor;
  } while (cursor);
  return { stalled, watched };
}

async function reportStall(ports: RaiseNoticePorts, watch: HeartbeatWatch, windowMinutes: number, silentMinutes: number, options?: NoticeDeliveryOptions): Promise<boolean> {
  const progress = watch.progress ? `${watch.progress.done}/${watch.progress.total}` : undefined;
  const { notice } = await raiseNotice(
    ports,
    {
      dedupKey: `stall:${watch.runKind}:${watch.runId}`,
      kind: 'stall',
      severity: 'warning',
      title: `${watch.runKind} ${watch.runId} stalled: no heartbeat for ${silentMinutes} min`.slice(0, 150),
      text:
        `No progress for ${silentMinutes} minutes (its window is ${windowMinutes}). Last heartbeat ${watch.lastBeatAt} in ${watch.stage}` +
        `${progress ? ` at ${progress}` : ''}${watch.message ? `: ${watch.message}` : ''}. Look at its logs, then stop or resume it.`,
      source: { capability: 'people', runKind: watch.runKind, runId: watch.runId },
      link: runLinkOf(watch.runKind, watch.runId),
      fields: { stage: watch.stage, 'last heartbeat': watch.lastBeatAt, ...(progress ? { progress } : {}), 'window (min)': windowMinutes },
    },
    options,
  );
  // Mark the watch, over the watch as read: a heartbeat that came in meanwhile means it is not stalled after all.
  const { written } = await ports.records.put(heartbeatRecord.encode({ ...watch, stallNoticeId: notice.noticeId }), {
    condition: { kind: 'unchanged', field: 'lastBeatAt', value: watch.lastBeatAt },
  });
  if (!written) {
    await resolveNotice(ports.records, notice.noticeId, { by: 'heartbeat', outcome: 'Heartbeats resumed.' }, ports.now?.() ?? new Date()).catch(() => undefined);
    return false;
  }
  return true;
}
