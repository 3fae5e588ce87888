/**
 * Events port for the local runtime: each published event is appended to an SQLite table (so the CLI and tests
 * can list what was published, across restarts and processes) and handed to the in-process subscribers of its
 * type, after the commit. A subscriber that throws is reported (by default as a JSON line on stderr) and never
 * fails the publish, as a failing EventBridge target never fails PutEvents.
 *
 * @example
 * const stop = events.subscribe('feedback.stored', (event) => console.log(event.detail));
 * await events.publish([{ type: 'feedback.stored', detail: { eventIds: ['e1'] } }]);
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { EVENT_SOURCE, type DomainEvent, type EventsPort } from '../../ports/events.ts';
import { z } from 'zod';
import { groupCommit, StatementCache, type GroupCommit } from './sqlite-database.ts';
import { defineRowCodec, integerColumn, jsonColumn } from './sqlite-rows.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL,
  source TEXT NOT NULL,
  type TEXT NOT NULL,
  detail TEXT NOT NULL,
  published_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_type ON events (type, seq);
`;

const eventRow = defineRowCodec('events', {
  seq: integerColumn,
  id: z.string(),
  source: z.string(),
  type: z.string(),
  detail: jsonColumn(z.record(z.string(), z.unknown())),
  published_at: integerColumn,
});

function publishedEvent(row: unknown): PublishedEvent {
  const { published_at: publishedAt, ...event } = eventRow.decode(row);
  return { ...event, publishedAt };
}

/** An event as the local bus stored it. */
export interface PublishedEvent extends DomainEvent {
  /** The caller's id, or a generated one. */
  id: string;
  /** Position in the log, increasing. */
  seq: number;
  source: string;
  /** Epoch milliseconds. */
  publishedAt: number;
}

export type EventSubscriber = (event: PublishedEvent) => void | Promise<void>;

/** Subscribe with this type to receive every event. */
export const ALL_EVENTS = '*';

function reportToStderr(error: unknown, event: PublishedEvent): void {
  process.stderr.write(`${JSON.stringify({ level: 'ERROR', message: 'event subscriber failed', type: event.type, id: event.id, error: String(error) })}\n`);
}

export class LocalEvents implements EventsPort {
  readonly #writes: GroupCommit;
  readonly #sql: StatementCache;
  readonly #now: () => Date;
  readonly #subscribers = new Map<string, Set<EventSubscriber>>();
  readonly #onSubscriberError: (error: unknown, event: PublishedEvent) => void;

  constructor(db: DatabaseSync, options: { now?: () => Date; onSubscriberError?: (error: unknown, event: PublishedEvent) => void } = {}) {
    this.#writes = groupCommit(db);
    this.#now = options.now ?? (() => new Date());
    this.#onSubscriberError = options.onSubscriberError ?? reportToStderr;
    db.exec(SCHEMA);
    this.#sql = new StatementCache(db);
  }

  async publish(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const publishedAt = this.#now().getTime();
    const stored = await this.#writes.run(() =>
      events.map((event) => {
        const id = event.id ?? randomUUID();
        const { lastInsertRowid } = this.#sql
          .get('INSERT INTO events (id, source, type, detail, published_at) VALUES (?, ?, ?, ?, ?)')
          .run(id, EVENT_SOURCE, event.type, JSON.stringify(event.detail), publishedAt);
        return { id, seq: Number(lastInsertRowid), source: EVENT_SOURCE, type: event.type, detail: structuredClone(event.detail), publishedAt };
      }),
    );
    for (const event of stored) {
      for (const subscriber of [...(this.#subscribers.get(event.type) ?? []), ...(this.#subscribers.get(ALL_EVENTS) ?? [])]) {
        queueMicrotask(() => {
          Promise.resolve()
            .then(() => subscriber(event))
            .catch((error: unknown) => this.#onSubscriberError(error, event));
        });
      }
    }
  }

  /** Calls `fn` for every later event of `type` (or of every type with `'*'`); returns the unsubscribe function. */
  subscribe(type: string, fn: EventSubscriber): () => void {
    let set = this.#subscribers.get(type);
    if (!set) {
      set = new Set();
      this.#subscribers.set(type, set);
    }
    set.add(fn);
    return () => {
      this.#subscribers.get(type)?.delete(fn);
    };
  }

  /** The latest `limit` events (of one type, if given), oldest first; `afterSeq` to tail the log. */
  recent(options: { type?: string; limit?: number; afterSeq?: number } = {}): PublishedEvent[] {
    const limit = Math.min(Math.max(options.limit ?? 100, 1), 10_000);
    const rows = this.#sql
      .get(
        `SELECT seq, id, source, type, detail, published_at FROM events
         WHERE (?1 IS NULL OR type = ?1) AND seq > ?2 ORDER BY seq DESC LIMIT ?3`,
      )
      .all(options.type ?? null, options.afterSeq ?? 0, limit);
    return rows.reverse().map(publishedEvent);
  }

  /**
   * Events after `afterSeq`, OLDEST first, of the given types (all when omitted): a durable tail for consumers that
   * run in another thread or process than the publisher (the local failure-mode pipeline keeps its own cursor).
   */
  after(afterSeq: number, options: { types?: readonly string[]; limit?: number } = {}): PublishedEvent[] {
    const limit = Math.min(Math.max(options.limit ?? 100, 1), 10_000);
    const types = options.types ?? [];
    const rows = this.#sql
      .get(
        `SELECT seq, id, source, type, detail, published_at FROM events
         WHERE seq > ?1 AND (?2 = '[]' OR type IN (SELECT value FROM json_each(?2))) ORDER BY seq ASC LIMIT ?3`,
      )
      .all(afterSeq, JSON.stringify(types), limit);
    return rows.map(publishedEvent);
  }
}
