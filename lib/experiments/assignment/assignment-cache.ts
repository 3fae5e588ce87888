/**
 * The running experiments of one tenant, held in memory so `POST /v1/assignments` reads no record per request.
 *
 * Loaded from the records (the `running` page of `EXPERIMENTS`) on first use, then refreshed when older than
 * `refreshMs` (default 5 s): a request that finds the copy older than that waits for one reload, shared by every
 * request that arrives meanwhile; a copy past half its age is reloaded in the background while requests keep
 * answering from it. No timer: nothing to close, and a frozen Lambda wakes to a stale copy it reloads. A request
 * naming an experiment the copy lacks (started a moment ago) reloads at most once per `missReloadMs` (default 1 s), so
 * made-up names cannot turn requests into record reads.
 *
 * @example
 * const cache = new AssignmentCache(ports.records, { now: () => Date.now() });
 * const running = await cache.running(); // ExperimentRecord[]
 */
import type { RecordsPort } from '../../ports/records.ts';
import { EXPERIMENT_LIST_MAX, listExperiments } from '../experiment-store.ts';
import type { ExperimentRecord } from '../schemas.ts';

export interface AssignmentCacheOptions {
  /** Age after which a request reloads first (ms). */
  refreshMs?: number;
  /** Least time between reloads caused by a request naming an experiment the copy lacks (ms). */
  missReloadMs?: number;
  /** Milliseconds clock (injected so tests control age). */
  now?: () => number;
}

export class AssignmentCache {
  private readonly records: RecordsPort;
  private readonly refreshMs: number;
  private readonly missReloadMs: number;
  private readonly now: () => number;
  private experiments: ExperimentRecord[] = [];
  private byId = new Map<string, ExperimentRecord>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  /** How many times the records were read (tests and the benchmark check that requests do not). */
  loads = 0;

  constructor(records: RecordsPort, options: AssignmentCacheOptions = {}) {
    this.records = records;
    this.refreshMs = options.refreshMs ?? 5000;
    this.missReloadMs = options.missReloadMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** The running experiments, reloaded first when the copy is stale; `wanted` ids the copy lacks may reload it. */
  async running(wanted: readonly string[] = []): Promise<ExperimentRecord[]> {
    const age = this.now() - this.loadedAt;
    if (age >= this.refreshMs) await this.reload();
    else if (wanted.some((id) => !this.byId.has(id)) && age >= this.missReloadMs) await this.reload();
    else if (age >= this.refreshMs / 2) void this.reload().catch(() => undefined); // the next stale request retries
    return this.experiments;
  }

  /** Reloads now (one load at a time; callers during a load share it). */
  reload(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<void> {
    const started = this.now();
    const all: ExperimentRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await listExperiments(this.records, { status: 'running', limit: EXPERIMENT_LIST_MAX, ...(cursor ? { cursor } : {}) });
      all.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    this.loads++;
    this.experiments = all;
    this.byId = new Map(all.map((e) => [e.definition.id, e]));
    this.loadedAt = started;
  }
}
