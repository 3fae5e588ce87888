/**
 * Events port on one EventBridge bus: source `flywheel`, detail-type = the event's type, detail = its JSON.
 *
 * @example
 * const events = new EventBridgeEvents(new EventBridgeClient({}), 'flywheel-dev');
 * await events.publish([{ type: 'feedback.stored', detail: { eventIds: ['e1'] } }]);
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { EVENT_SOURCE, type DomainEvent, type EventsPort } from '../../ports/events.ts';
import { EventPublishError } from './aws-driver-errors.ts';

const MAX_ENTRIES = 10;
/** PutEvents caps the whole request at 256 KiB (entries measured as UTF-8 of source, detail-type and detail). */
const MAX_REQUEST_BYTES = 256 * 1024;

export class EventBridgeEvents implements EventsPort {
  readonly #client: EventBridgeClient;
  readonly #bus: string;

  constructor(client: EventBridgeClient, eventBusName: string) {
    this.#client = client;
    this.#bus = eventBusName;
  }

  async publish(events: DomainEvent[]): Promise<void> {
    const chunks: PutEventsRequestEntry[][] = [];
    let chunk: PutEventsRequestEntry[] = [];
    let bytes = 0;
    for (const event of events) {
      const detail = JSON.stringify(event.detail);
      const size = Buffer.byteLength(detail) + Buffer.byteLength(event.type) + EVENT_SOURCE.length;
      if (chunk.length === MAX_ENTRIES || (chunk.length > 0 && bytes + size > MAX_REQUEST_BYTES)) {
        chunks.push(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push({ EventBusName: this.#bus, Source: EVENT_SOURCE, DetailType: event.type, Detail: detail });
      bytes += size;
    }
    if (chunk.length > 0) chunks.push(chunk);

    for (const entries of chunks) {
      const result = await this.#client.send(new PutEventsCommand({ Entries: entries }));
      if ((result.FailedEntryCount ?? 0) > 0) {
        const failed = (result.Entries ?? [])
          .map((entry, i) => (entry.ErrorCode ? `${entries[i]?.DetailType}: ${entry.ErrorCode} ${entry.ErrorMessage ?? ''}`.trim() : undefined))
          .filter((line): line is string => line !== undefined);
        throw new EventPublishError(`PutEvents failed for ${result.FailedEntryCount} entries: ${failed.join('; ')}`);
      }
    }
  }
}
