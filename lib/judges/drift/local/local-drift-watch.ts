/**
 * The drift watch inside `npm start`, shaped like its AWS twin (EventBridge rule → SQS → `judges/drift-watch`): a
 * tail of the local event log reads `judge.verdict` events in order and hands each to the same handler. The tail's
 * cursor is a record, so verdicts published while the runtime was down, or by the consumer thread (which has its own
 * event bus instance and publishes the failure-mode chain's verdicts), are picked up. An event that fails is logged
 * and tried again on the next tick, up to `maxReceiveCount` times, then skipped (logged as dead-lettered).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { LocalPorts } from '../../../drivers/local/local-ports.ts';
import { EVENT_SOURCE } from '../../../ports/events.ts';
import { DRIFT_EVENT_TYPES, watchOptionsFromEnv, watchVerdictEvent } from '../consumers/watch-verdicts-consumer.ts';
import { driftCursorRecord } from '../record-codecs.ts';
import { driftKeys } from '../record-keys.ts';
import type { WatchOptions } from '../watch-verdicts.ts';

export interface LocalDriftWatch {
  stop(): Promise<void>;
  /** Reads the log up to its end now (tests). */
  drain(): Promise<void>;
}

/**
 * @example
 * const watch = startLocalDriftWatch(localPorts, { logger });
 * await watch.stop();
 */
export function startLocalDriftWatch(
  ports: Omit<LocalPorts, 'close'>,
  options: { logger?: Logger; pollMs?: number; maxReceiveCount?: number; watch?: WatchOptions } = {},
): LocalDriftWatch {
  const watch = options.watch ?? watchOptionsFromEnv();
  const maxReceives = options.maxReceiveCount ?? 5;
  const failures = new Map<number, number>();
  const tick = async () => {
    const { pk, sk } = driftKeys.localEventCursor;
    let seq = driftCursorRecord.decodeIfPresent(await ports.records.get(pk, sk))?.seq ?? 0;
    for (;;) {
      const batch = ports.events.after(seq, { types: DRIFT_EVENT_TYPES, limit: 100 });
      if (batch.length === 0) break;
      for (const e of batch) {
        const body = JSON.stringify({ version: '0', id: e.id, 'detail-type': e.type, source: EVENT_SOURCE, time: new Date(e.publishedAt).toISOString(), detail: e.detail });
        try {
          await watchVerdictEvent(ports, body, watch);
          failures.delete(e.seq);
        } catch (error) {
          const receives = (failures.get(e.seq) ?? 0) + 1;
          failures.set(e.seq, receives);
          if (receives < maxReceives) {
            options.logger?.warn('drift watch: judge.verdict failed; trying again', { seq: e.seq, receives, error: error as Error });
            await ports.records.put(driftCursorRecord.encode({ seq }));
            return;
          }
          options.logger?.error('drift watch: judge.verdict dead-lettered after repeated failures', { seq: e.seq, receives, error: error as Error });
          failures.delete(e.seq);
        }
        seq = e.seq;
      }
      await ports.records.put(driftCursorRecord.encode({ seq }));
    }
  };
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> = Promise.resolve();
  // One tick at a time: `drain` and the timer share the chain, so no event is handled twice at once.
  let chain: Promise<void> = Promise.resolve();
  const run = () =>
    (chain = chain.then(tick).catch((error: unknown) => options.logger?.error('drift watch: event tail failed', { error: error as Error })));
  const loop = () => {
    if (!running) return;
    ticking = run().finally(() => {
      if (running) timer = setTimeout(loop, options.pollMs ?? 250);
    });
  };
  loop();
  return {
    async drain() {
      await ticking;
      await run();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await ticking;
    },
  };
}
