/**
 * What the events port promises, on every driver: each published event reaches the bus's listeners with source
 * `flywheel`, its type as the detail-type and its detail intact; a publish of more events than one backend call
 * takes is chunked, and none is lost.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, type EventsPort } from '../../lib/ports/events.ts';

export interface ObservedEvent {
  source: string;
  type: string;
  detail: Record<string, unknown>;
}

export interface EventsUnderTest {
  events: EventsPort;
  /**
   * Resolves with (at least) `count` events seen by a listener of the bus, in any order; rejects with the count seen
   * after an upper bound (a lost event fails, a slow one does not).
   */
  observe(count: number): Promise<ObservedEvent[]>;
}

/** Publishing is slow on moto under load (see events.test.ts): a bound for a hang, above `observe`'s own. */
const PUBLISH_TEST_TIMEOUT_MS = 60_000;

export function describeEventsContract(name: string, makeEvents: () => Promise<EventsUnderTest>): void {
  describe(`events contract: ${name}`, () => {
    let bus: EventsUnderTest;
    beforeEach(async () => {
      bus = await makeEvents();
    });

    it('delivers published events with source, type and detail intact', async () => {
      const observed = bus.observe(2);
      await bus.events.publish([
        { type: 'feedback.stored', detail: { eventIds: ['e1', 'e2'], count: 2, nested: { ok: true, none: null } }, id: 'batch-1' },
        { type: 'report.filed', detail: { title: 'héllo 😀' } },
      ]);
      const events = await observed;
      const byType = new Map(events.map((event) => [event.type, event]));
      expect(byType.get('feedback.stored')).toEqual({
        source: EVENT_SOURCE,
        type: 'feedback.stored',
        detail: { eventIds: ['e1', 'e2'], count: 2, nested: { ok: true, none: null } },
      });
      expect(byType.get('report.filed')).toEqual({ source: EVENT_SOURCE, type: 'report.filed', detail: { title: 'héllo 😀' } });
    }, PUBLISH_TEST_TIMEOUT_MS);

    it('chunks a large publish and loses nothing', async () => {
      const observed = bus.observe(23);
      await bus.events.publish(Array.from({ length: 23 }, (_, i) => ({ type: 'feedback.stored', detail: { i } })));
      const events = await observed;
      expect(events.map((event) => event.detail.i).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 23 }, (_, i) => i));
      await bus.events.publish([]);
    }, PUBLISH_TEST_TIMEOUT_MS);
  });
}
