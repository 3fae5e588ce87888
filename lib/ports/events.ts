/**
 * Events port: publish domain events (`feedback.stored`, …) for the parts that come later.
 *
 * Drivers: EventBridge (`lib/drivers/aws/eventbridge-events.ts`) and a local bus
 * (`lib/drivers/local/local-events.ts`) that appends to SQLite and calls in-process subscribers.
 * Both pass `test/contract/events.contract.ts`.
 *
 * @example
 * await events.publish([{ type: 'feedback.stored', detail: { eventIds: ['e1'] } }]);
 */
export interface DomainEvent {
  /** Dotted name, e.g. `feedback.stored`. Becomes the EventBridge detail-type. */
  type: string;
  /** JSON detail; keep it small (keys, not bodies): EventBridge caps an entry at 256 KiB. */
  detail: Record<string, unknown>;
  /** Optional stable id so a retried publish can be recognised downstream. */
  id?: string;
}

export interface EventsPort {
  /** Publishes events; drivers chunk as their backend requires. Throws if any entry failed. */
  publish(events: DomainEvent[]): Promise<void>;
}

/** The EventBridge `source` of every Flywheel event. */
export const EVENT_SOURCE = 'flywheel';
