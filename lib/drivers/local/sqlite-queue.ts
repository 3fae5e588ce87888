/**
 * Queue port on SQLite with SQS's semantics: at-least-once delivery, a visibility timeout per receive, a receive
 * count, `delaySeconds`, long polling, and redrive: a message already received `maxReceiveCount` times is moved
 * to the dead-letter queue on the next receive, as SQS does. Several queues share one database file (one row per
 * message, tagged with its queue's name), so moving to the DLQ is one UPDATE in one transaction.
 *
 * Durability — a 202 means durable: `send` returns only after the commit is fsynced (`synchronous = FULL` in WAL
 * mode, set by `openDatabase`). Measured here (2-core VM, ext4, 500 sequential sends after warm-up, other work
 * running): a 200-byte send takes
 * p50 0.18 ms / p99 0.54 ms with FULL against 0.015 / 0.19 ms with NORMAL; a 150 KB send (a batch request of
 * 500 events) p50 0.38 ms / p99 5.9 ms with FULL against 0.10 / 6.9 ms with NORMAL. The batch endpoint sends one
 * message per request, so FULL costs under 1 µs per event, while NORMAL could lose acknowledged requests on power loss.
 *
 * Sends (and deletes) issued in the same event-loop turn share one transaction, so concurrent requests share an
 * fsync (group commit, `GroupCommit`); each send still resolves only after its commit.
 *
 * Long polling waits for a send in this process (notified at once) or polls every 50 ms (sends from another
 * process, or messages whose visibility timeout or delay expires).
 *
 * @example
 * const queue = new SqliteQueue(openDatabase('.flywheel/queue.sqlite'), 'ingest', { deadLetter: dlq, maxReceiveCount: 5 });
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { DatabaseSync } from 'node:sqlite';
import type { QueueMessage, QueuePort, ReceiveOptions } from '../../ports/queue.ts';
import { ValidationError } from '../../errors.ts';
import { z } from 'zod';
import { groupCommit, inTransaction, StatementCache, type GroupCommit } from './sqlite-database.ts';
import { defineRowCodec, integerColumn } from './sqlite-rows.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL,
  id TEXT NOT NULL UNIQUE,
  body TEXT NOT NULL,
  sent_at INTEGER NOT NULL,
  visible_at INTEGER NOT NULL,
  receive_count INTEGER NOT NULL DEFAULT 0,
  receipt TEXT UNIQUE
);
CREATE INDEX IF NOT EXISTS messages_ready ON messages (queue, visible_at, seq);
`;

const POLL_MS = 50;
const DEFAULT_VISIBILITY_SECONDS = 30;

export interface SqliteQueueOptions {
  /** Where messages go after `maxReceiveCount` receives; without it messages are never dead-lettered. */
  deadLetter?: SqliteQueue;
  maxReceiveCount?: number;
  /** Default visibility timeout (SQS's default is 30 s). */
  visibilityTimeoutSeconds?: number;
  now?: () => Date;
}

/** A message as `receive` reads it. */
const messageRow = defineRowCodec('messages', {
  seq: integerColumn,
  id: z.string(),
  body: z.string(),
  sent_at: integerColumn,
  receive_count: integerColumn,
});

const depthRow = defineRowCodec('messages', { visible: integerColumn, in_flight: integerColumn });

export class SqliteQueue implements QueuePort {
  readonly name: string;
  readonly #db: DatabaseSync;
  readonly #sql: StatementCache;
  readonly #options: SqliteQueueOptions;
  readonly #now: () => number;
  readonly #sent = new EventEmitter();
  readonly #writes: GroupCommit;

  constructor(db: DatabaseSync, name: string, options: SqliteQueueOptions = {}) {
    this.#db = db;
    this.name = name;
    this.#options = options;
    const now = options.now;
    this.#now = now ? () => now().getTime() : Date.now;
    this.#sent.setMaxListeners(0);
    db.exec(SCHEMA);
    this.#sql = new StatementCache(db);
    this.#writes = groupCommit(db);
  }

  #insert(body: string, delaySeconds: number): string {
    const id = randomUUID();
    const now = this.#now();
    this.#sql
      .get('INSERT INTO messages (queue, id, body, sent_at, visible_at) VALUES (?, ?, ?, ?, ?)')
      .run(this.name, id, body, now, now + delaySeconds * 1000);
    return id;
  }

  async send(body: string, options: { delaySeconds?: number } = {}): Promise<string> {
    const delay = options.delaySeconds ?? 0;
    if (delay < 0 || delay > 900) throw new ValidationError('delaySeconds must be 0–900', [{ path: 'delaySeconds', message: 'out of range' }]);
    const id = await this.#writes.run(() => this.#insert(body, delay));
    this.#sent.emit('sent');
    return id;
  }

  /** All bodies in one transaction (one fsync). */
  async sendBatch(bodies: string[]): Promise<string[]> {
    if (bodies.length === 0) return [];
    const ids = await this.#writes.run(() => bodies.map((body) => this.#insert(body, 0)));
    this.#sent.emit('sent');
    return ids;
  }

  async receive(options: ReceiveOptions = {}): Promise<QueueMessage[]> {
    const max = options.maxMessages ?? 1;
    if (!Number.isInteger(max) || max < 1 || max > 10) {
      throw new ValidationError('maxMessages must be 1–10', [{ path: 'maxMessages', message: 'out of range' }]);
    }
    const visibility = options.visibilityTimeoutSeconds ?? this.#options.visibilityTimeoutSeconds ?? DEFAULT_VISIBILITY_SECONDS;
    const deadline = Date.now() + Math.min(options.waitSeconds ?? 0, 20) * 1000;
    for (;;) {
      const messages = this.#receiveNow(max, visibility);
      if (messages.length > 0 || Date.now() >= deadline) return messages;
      await this.#waitForSend(Math.min(POLL_MS, deadline - Date.now()));
    }
  }

  #waitForSend(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#sent.off('sent', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(ms, 1));
      this.#sent.once('sent', done);
    });
  }

  #receiveNow(max: number, visibilitySeconds: number): QueueMessage[] {
    const { deadLetter, maxReceiveCount } = this.#options;
    let moved = false;
    const messages = inTransaction(this.#db, () => {
      const now = this.#now();
      const received: QueueMessage[] = [];
      // A zero visibility timeout leaves a received row visible: never hand the same message out twice in one call.
      const seen = new Set<number>();
      while (received.length < max) {
        const rows = messageRow
          .decodeAll(
            this.#sql
              .get('SELECT seq, id, body, sent_at, receive_count FROM messages WHERE queue = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?')
              .all(this.name, now, max - received.length + seen.size),
          )
          .filter((row) => !seen.has(row.seq));
        if (rows.length === 0) break;
        for (const row of rows) {
          seen.add(row.seq);
          if (deadLetter && maxReceiveCount !== undefined && row.receive_count >= maxReceiveCount) {
            this.#sql
              .get('UPDATE messages SET queue = ?, receive_count = 0, receipt = NULL, visible_at = ? WHERE seq = ?')
              .run(deadLetter.name, now, row.seq);
            moved = true;
            continue;
          }
          const receipt = `${row.id}.${randomUUID()}`;
          this.#sql
            .get('UPDATE messages SET receive_count = receive_count + 1, receipt = ?, visible_at = ? WHERE seq = ?')
            .run(receipt, now + visibilitySeconds * 1000, row.seq);
          received.push({
            messageId: row.id,
            body: row.body,
            receiptHandle: receipt,
            receiveCount: row.receive_count + 1,
            sentAt: row.sent_at,
          });
        }
      }
      return received;
    });
    if (moved && deadLetter) deadLetter.#sent.emit('sent');
    return messages;
  }

  /** Deletes only with the latest receipt handle; an older one is accepted and does nothing, as in SQS. */
  async delete(receiptHandle: string): Promise<void> {
    await this.#writes.run(() => this.#sql.get('DELETE FROM messages WHERE queue = ? AND receipt = ?').run(this.name, receiptHandle));
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    if (seconds < 0 || seconds > 43_200) throw new ValidationError('visibility must be 0–43200 s', [{ path: 'seconds', message: 'out of range' }]);
    await this.#writes.run(() =>
      this.#sql
        .get('UPDATE messages SET visible_at = ? WHERE queue = ? AND receipt = ?')
        .run(this.#now() + seconds * 1000, this.name, receiptHandle),
    );
  }

  /** Delayed messages (never received, not yet visible) count in neither figure, as in SQS. */
  async depth(): Promise<{ visible: number; inFlight: number }> {
    const row = depthRow.decode(
      this.#sql
        .get(
          `SELECT COALESCE(SUM(visible_at <= ?1), 0) AS visible, COALESCE(SUM(visible_at > ?1 AND receipt IS NOT NULL), 0) AS in_flight
           FROM messages WHERE queue = ?2`,
        )
        .get(this.#now(), this.name),
    );
    return { visible: row.visible, inFlight: row.in_flight };
  }
}
