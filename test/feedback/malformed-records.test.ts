import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getFeedback } from '../../lib/feedback/get-feedback.ts';
import { listFeedback } from '../../lib/feedback/list-feedback.ts';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness(new Date('2026-12-02T10:00:00.000Z'));
});
afterEach(() => h.close());

/** Ingests and stores one event, then overwrites one of its stored fields as a hand edit would. */
async function storeThenCorrupt(eventId: string, field: string, value: unknown): Promise<void> {
  const res = await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId, model: 'ckpt-m' }) });
  expect(res.status).toBe(202);
  await h.drain();
  const key = feedbackKeys.event(eventId);
  const stored = await h.ports.records.get(key.pk, key.sk);
  expect(stored).toBeDefined();
  await h.ports.records.put({ ...stored!, [field]: value });
}

describe('a malformed feedback record', () => {
  it('fails where it is read, naming the record and the field, not as a wrong value downstream', async () => {
    await storeThenCorrupt('m-1', 'rating', 'sideways');
    const read = getFeedback(h.ports, 'm-1');
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ pk: 'FEEDBACK#m-1', sk: 'EVENT', field: 'rating' });
    await expect(read).rejects.toThrow(/^feedback event record FEEDBACK#m-1 \/ EVENT: field "rating"/);
  });

  it('fails a listing too', async () => {
    await storeThenCorrupt('m-2', 'trainingConsent', 'yes');
    await expect(listFeedback(h.ports, { model: 'ckpt-m' })).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', pk: 'FEEDBACK#m-2', field: 'trainingConsent' });
  });
});
