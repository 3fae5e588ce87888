/**
 * What the queue port promises, on every driver: a sent message is received with its body, id, send time and a
 * receive count; while received it is invisible for the visibility timeout and reappears afterwards (count + 1)
 * unless deleted with its latest receipt handle; `changeVisibility` moves that moment; a message already received
 * `maxReceiveCount` times moves to the dead-letter queue on the next receive (SQS redrive); `delaySeconds` hides a
 * new message for a while; long polling returns as soon as a message arrives; `sendBatch` returns ids in order;
 * `depth` counts visible and in-flight messages.
 *
 * Timeouts are kept at 1 s so the suite takes seconds.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { QueueMessage, QueuePort } from '../../lib/ports/queue.ts';
import { pause, waitFor } from '../support/wait-for.ts';

export interface QueueUnderTest {
  queue: QueuePort;
  /** The queue's dead-letter queue. */
  deadLetters: QueuePort;
}

/** Receives until `n` messages came (long polls of 1 s); a message not there within the upper bound fails the wait. */
async function receiveN(queue: QueuePort, n: number, visibilityTimeoutSeconds = 30): Promise<QueueMessage[]> {
  const messages: QueueMessage[] = [];
  return waitFor(
    async () => {
      messages.push(...(await queue.receive({ maxMessages: Math.min(10, n - messages.length), visibilityTimeoutSeconds, waitSeconds: 1 })));
      return messages.length >= n ? messages : undefined;
    },
    { what: () => `${n} messages (received ${messages.length})`, everyMs: 0 },
  );
}

export function describeQueueContract(name: string, makeQueue: (options: { maxReceiveCount: number }) => Promise<QueueUnderTest>): void {
  describe(`queue contract: ${name}`, () => {
    let queue: QueuePort;
    let deadLetters: QueuePort;
    beforeEach(async () => {
      ({ queue, deadLetters } = await makeQueue({ maxReceiveCount: 2 }));
    });

    it('sends, receives and deletes', async () => {
      const before = Date.now();
      const id = await queue.send('{"hello":"world"}');
      const [message, ...rest] = await receiveN(queue, 1);
      expect(rest).toEqual([]);
      expect(message).toMatchObject({ messageId: id, body: '{"hello":"world"}', receiveCount: 1 });
      expect(message!.sentAt).toBeGreaterThanOrEqual(before - 2000);
      expect(message!.sentAt).toBeLessThanOrEqual(Date.now() + 2000);
      expect(typeof message!.receiptHandle).toBe('string');
      expect(await queue.depth()).toEqual({ visible: 0, inFlight: 1 });
      await queue.delete(message!.receiptHandle);
      expect(await queue.depth()).toEqual({ visible: 0, inFlight: 0 });
      expect(await queue.receive({ maxMessages: 10 })).toEqual([]);
    });

    it('never returns one message twice in a single receive, even with a zero visibility timeout', async () => {
      await queue.sendBatch(['a', 'b', 'c']);
      const received = await receiveN(queue, 3, 0);
      expect(received.map((m) => m.body).sort()).toEqual(['a', 'b', 'c']);
      expect(new Set(received.map((m) => m.messageId)).size).toBe(3);
    });

    it('makes a message visible again after the visibility timeout, counting the receive', async () => {
      const id = await queue.send('again');
      const [first] = await receiveN(queue, 1, 1);
      expect(await queue.receive({ maxMessages: 10 })).toEqual([]);
      // receiveN polls until the visibility timeout has passed and the message is back.
      const [second] = await receiveN(queue, 1, 30);
      expect(second).toMatchObject({ messageId: id, body: 'again', receiveCount: 2 });
      expect(second!.receiptHandle).not.toBe(first!.receiptHandle);
      expect(second!.sentAt).toBe(first!.sentAt);
    });

    it('changeVisibility(0) makes a received message visible at once', async () => {
      await queue.send('now');
      const [first] = await receiveN(queue, 1, 30);
      await queue.changeVisibility(first!.receiptHandle, 0);
      const [second] = await receiveN(queue, 1, 30);
      expect(second).toMatchObject({ body: 'now', receiveCount: 2 });
      await queue.changeVisibility(second!.receiptHandle, 30);
      expect(await queue.receive({ maxMessages: 10 })).toEqual([]);
    });

    it('moves a message received maxReceiveCount times to the dead-letter queue on the next receive', async () => {
      const id = await queue.send('poison');
      for (let receive = 1; receive <= 2; receive++) {
        const [message] = await receiveN(queue, 1, 30);
        expect(message).toMatchObject({ messageId: id, receiveCount: receive });
        await queue.changeVisibility(message!.receiptHandle, 0);
      }
      expect(await queue.receive({ maxMessages: 10 })).toEqual([]);
      const [dead] = await receiveN(deadLetters, 1, 30);
      expect(dead).toMatchObject({ messageId: id, body: 'poison' });
      await deadLetters.delete(dead!.receiptHandle);
      expect(await queue.depth()).toEqual({ visible: 0, inFlight: 0 });
    });

    it('hides a message sent with delaySeconds until the delay passes', async () => {
      await queue.send('later', { delaySeconds: 1 });
      expect(await queue.receive({ maxMessages: 10 })).toEqual([]);
      // receiveN polls until the delay has passed.
      const [message] = await receiveN(queue, 1);
      expect(message?.body).toBe('later');
    });

    it('long-polls until a message arrives', async () => {
      const started = Date.now();
      const received = queue.receive({ maxMessages: 1, waitSeconds: 5 });
      // Not a condition stand-in: the send must come after the receive began polling, which nothing shows.
      await pause(300);
      await queue.send('arrived');
      const messages = await received;
      expect(messages.map((m) => m.body)).toEqual(['arrived']);
      expect(Date.now() - started).toBeLessThan(4000);
    });

    it('sendBatch returns ids in order, and depth counts visible and in-flight', async () => {
      const bodies = ['b0', 'b1', 'b2', 'b3'];
      const ids = await queue.sendBatch(bodies);
      expect(ids).toHaveLength(4);
      expect(new Set(ids).size).toBe(4);
      const messages = await receiveN(queue, 4);
      const byId = new Map(messages.map((m) => [m.messageId, m.body]));
      expect(ids.map((id) => byId.get(id))).toEqual(bodies);
      await queue.changeVisibility(messages[0]!.receiptHandle, 0);
      await queue.changeVisibility(messages[1]!.receiptHandle, 0);
      expect(await queue.depth()).toEqual({ visible: 2, inFlight: 2 });
      expect(await queue.sendBatch([])).toEqual([]);
    });
  });
}
