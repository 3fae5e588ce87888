import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { EventBridgeEvents } from '../../lib/drivers/aws/eventbridge-events.ts';
import { ALL_EVENTS, LocalEvents } from '../../lib/drivers/local/local-events.ts';
import { createTestEventBus, motoClients } from '../support/aws-test-resources.ts';
import { describeEventsContract, type ObservedEvent } from './events.contract.ts';
import { localFixture } from './local-driver-fixture.ts';
import { waitFor } from '../support/wait-for.ts';

const aws = motoClients();
const local = localFixture();
/**
 * Upper bound only, below the contract's test timeout so a lost event fails with a count rather than a timeout.
 * moto is slow to publish: each event's default input transform builds eight JSONPath parsers (jsonpath_ng), about
 * 0.1 s of CPU per event on a quiet machine and over 0.5 s on a busy one, so 23 events took 12-16 s under load.
 */
const OBSERVE_TIMEOUT_MS = 50_000;

describeEventsContract('EventBridge (moto, rule → SQS target)', async () => {
  const bus = await createTestEventBus(aws);
  return {
    events: new EventBridgeEvents(aws.eventbridge, bus.busName),
    // Polls until `count` events arrived (a condition, not a fixed deadline) and reads without deleting: moto's SQS
    // DeleteMessage rebuilds the queue's message list without its lock, so a delete racing the SendMessage that
    // PutEvents makes can drop that message. The queue is fresh per test, so nothing needs deleting; a long visibility
    // timeout and the event id keep each event once.
    observe: async (count) => {
      const seen = new Map<string, ObservedEvent>();
      return waitFor(
        async () => {
          const result = await aws.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: bus.targetQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 600 }),
          );
          for (const message of result.Messages ?? []) {
            const envelope = JSON.parse(message.Body!) as { id: string; source: string; 'detail-type': string; detail: Record<string, unknown> };
            seen.set(envelope.id, { source: envelope.source, type: envelope['detail-type'], detail: envelope.detail });
          }
          return seen.size >= count ? [...seen.values()] : undefined;
        },
        { what: () => `${count} events on the target queue (saw ${seen.size} of ${count})`, timeoutMs: OBSERVE_TIMEOUT_MS, everyMs: 0 },
      );
    },
  };
});

describeEventsContract('local bus (SQLite + subscribers)', async () => {
  const events = new LocalEvents(local.database('events.sqlite'));
  return {
    events,
    observe: (count) =>
      new Promise((resolve, reject) => {
        const seen: ObservedEvent[] = [];
        const timer = setTimeout(() => reject(new Error(`saw ${seen.length} of ${count} events`)), OBSERVE_TIMEOUT_MS);
        const stop = events.subscribe(ALL_EVENTS, (event) => {
          seen.push({ source: event.source, type: event.type, detail: event.detail });
          if (seen.length >= count) {
            clearTimeout(timer);
            stop();
            resolve(seen);
          }
        });
      }),
  };
});
