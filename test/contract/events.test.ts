import { ReceiveMessageCommand, DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { EventBridgeEvents } from '../../lib/drivers/aws/eventbridge-events.ts';
import { ALL_EVENTS, LocalEvents } from '../../lib/drivers/local/local-events.ts';
import { createTestEventBus, motoClients } from '../support/aws-test-resources.ts';
import { describeEventsContract, type ObservedEvent } from './events.contract.ts';
import { localFixture } from './local-driver-fixture.ts';

const aws = motoClients();
const local = localFixture();

describeEventsContract('EventBridge (moto, rule → SQS target)', async () => {
  const bus = await createTestEventBus(aws);
  return {
    events: new EventBridgeEvents(aws.eventbridge, bus.busName),
    observe: async (count) => {
      const seen: ObservedEvent[] = [];
      const deadline = Date.now() + 10_000;
      while (seen.length < count) {
        if (Date.now() > deadline) throw new Error(`saw ${seen.length} of ${count} events`);
        const result = await aws.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: bus.targetQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        for (const message of result.Messages ?? []) {
          const envelope = JSON.parse(message.Body!) as { source: string; 'detail-type': string; detail: Record<string, unknown> };
          seen.push({ source: envelope.source, type: envelope['detail-type'], detail: envelope.detail });
          await aws.sqs.send(new DeleteMessageCommand({ QueueUrl: bus.targetQueueUrl, ReceiptHandle: message.ReceiptHandle! }));
        }
      }
      return seen;
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
        const timer = setTimeout(() => reject(new Error(`saw ${seen.length} of ${count} events`)), 10_000);
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
