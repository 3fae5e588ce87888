/**
 * A tenant's view of the ports: what the dispatcher hands a route's use case, built from the request's authorizer
 * context, and what the consumers build from the tenant a message or event carries. Use cases do not change: they
 * read and write the keys they always did, and the view partitions them.
 *
 * - records: `pk`, `gsi1pk` and `gsi2pk` of every item written and every partition read get `T#<tenant>#` (items
 *   come back without it), so no key, list or index of one tenant reaches another's items;
 * - blobs: keys get `tenants/<tenant>/` (listed keys come back without it);
 * - ingest queue: each message (a JSON object) carries `"tenant"`, so the processor scopes its ports the same way;
 * - events: each event's detail carries `tenant`, so the consumers (failure modes) scope theirs;
 * - query: the engine's view for the tenant (`query.forTenant`), whose `tenant` the analyses' SQL names.
 *
 * The `default` tenant keeps today's un-prefixed keys, so existing data and callers keep working; no other tenant's
 * keys can be named through it (record partitions of use cases start with a fixed type, `FEEDBACK#`, `SUITE#`…,
 * never `T#`; client blob keys are checked, see `TRAJECTORY_KEY_PREFIX` in `lib/feedback/schemas.ts`).
 *
 * @example
 * const tenantPorts = scopePortsToTenant(ports, 'acme'); // FEEDBACK#e1 → T#acme#FEEDBACK#e1
 */
import type { BlobsPort } from '../ports/blobs.ts';
import type { DomainEvent, EventsPort } from '../ports/events.ts';
import type { Ports } from '../ports/ports.ts';
import type { QueuePort } from '../ports/queue.ts';
import type { RecordItem, RecordsPort } from '../ports/records.ts';
import { DEFAULT_TENANT, isTenant } from './scopes.ts';

/** Record partition prefix of a tenant (`T#acme#`); empty for the default tenant. */
export function tenantRecordPrefix(tenant: string): string {
  return tenant === DEFAULT_TENANT ? '' : `T#${tenant}#`;
}
/** Blob key prefix of a tenant (`tenants/acme/`); empty for the default tenant. */
export function tenantBlobPrefix(tenant: string): string {
  return tenant === DEFAULT_TENANT ? '' : `tenants/${tenant}/`;
}

const scoped = new WeakMap<Ports, Map<string, Ports>>();

/** The tenant's view of `ports` (the same object for the same ports and tenant). Throws on a malformed tenant. */
export function scopePortsToTenant<P extends Ports>(ports: P, tenant: string): P {
  if (!isTenant(tenant)) throw new Error(`not a tenant name: ${JSON.stringify(tenant)}`);
  if (tenant === DEFAULT_TENANT) return ports;
  let byTenant = scoped.get(ports);
  if (!byTenant) scoped.set(ports, (byTenant = new Map()));
  const hit = byTenant.get(tenant);
  if (hit) return hit as P;
  const view = {
    ...ports,
    records: new TenantRecords(ports.records, tenantRecordPrefix(tenant)),
    blobs: new TenantBlobs(ports.blobs, tenantBlobPrefix(tenant)),
    ingestQueue: new TenantQueue(ports.ingestQueue, tenant),
    events: new TenantEvents(ports.events, tenant),
    ...(ports.query ? { query: ports.query.forTenant(tenant) } : {}),
  } as P;
  // The sweep workflow and the jobs it submits run over the root ports (lib/sweeps/workflow): until they carry the
  // tenant, a tenant other than default cannot start them (POST /v1/sweeps answers 403).
  delete (view as Partial<Ports>).workflows;
  delete (view as Partial<Ports>).jobs;
  byTenant.set(tenant, view);
  return view;
}

/** The tenant a queue message or event detail names; `default` when it names none. Throws on a malformed one. */
export function tenantOf(value: { tenant?: unknown } | null | undefined): string {
  const t = value?.tenant;
  if (t === undefined) return DEFAULT_TENANT;
  if (!isTenant(t)) throw new Error(`malformed tenant ${JSON.stringify(t)}`);
  return t;
}

class TenantRecords implements RecordsPort {
  readonly #inner: RecordsPort;
  readonly #prefix: string;
  constructor(inner: RecordsPort, prefix: string) {
    this.#inner = inner;
    this.#prefix = prefix;
  }
  #in(item: RecordItem): RecordItem {
    const out: RecordItem = { ...item, pk: this.#prefix + item.pk };
    if (typeof item.gsi1pk === 'string') out.gsi1pk = this.#prefix + item.gsi1pk;
    if (typeof item.gsi2pk === 'string') out.gsi2pk = this.#prefix + item.gsi2pk;
    return out;
  }
  #out(item: RecordItem): RecordItem {
    const p = this.#prefix;
    const strip = (v: string) => (v.startsWith(p) ? v.slice(p.length) : v);
    const out: RecordItem = { ...item, pk: strip(item.pk) };
    if (item.gsi1pk !== undefined) out.gsi1pk = strip(item.gsi1pk);
    if (item.gsi2pk !== undefined) out.gsi2pk = strip(item.gsi2pk);
    return out;
  }
  put(item: RecordItem, options?: Parameters<RecordsPort['put']>[1]) {
    return this.#inner.put(this.#in(item), options);
  }
  putMany(items: RecordItem[]) {
    return this.#inner.putMany(items.map((i) => this.#in(i)));
  }
  async get(pk: string, sk: string) {
    const item = await this.#inner.get(this.#prefix + pk, sk);
    return item ? this.#out(item) : undefined;
  }
  async query(input: Parameters<RecordsPort['query']>[0]) {
    const page = await this.#inner.query({ ...input, partition: this.#prefix + input.partition });
    return { ...page, items: page.items.map((i) => this.#out(i)) };
  }
  delete(pk: string, sk: string) {
    return this.#inner.delete(this.#prefix + pk, sk);
  }
}

class TenantBlobs implements BlobsPort {
  readonly #inner: BlobsPort;
  readonly #prefix: string;
  constructor(inner: BlobsPort, prefix: string) {
    this.#inner = inner;
    this.#prefix = prefix;
  }
  put(key: string, body: Uint8Array | string, options?: Parameters<BlobsPort['put']>[2]) {
    return this.#inner.put(this.#prefix + key, body, options);
  }
  get(key: string) {
    return this.#inner.get(this.#prefix + key);
  }
  async list(prefix: string, options?: { cursor?: string; limit?: number }) {
    const page = await this.#inner.list(this.#prefix + prefix, options);
    return { ...page, keys: page.keys.map((k) => k.slice(this.#prefix.length)) };
  }
  delete(key: string) {
    return this.#inner.delete(this.#prefix + key);
  }
}

/** Splices `"tenant"` into a JSON object body (`{"tenant":"acme",…}`) without re-serialising it. */
export function withTenant(body: string, tenant: string): string {
  if (!body.startsWith('{')) throw new Error('a tenant queue message must be a JSON object');
  return body === '{}' ? `{"tenant":${JSON.stringify(tenant)}}` : `{"tenant":${JSON.stringify(tenant)},${body.slice(1)}`;
}

class TenantQueue implements QueuePort {
  readonly #inner: QueuePort;
  readonly #tenant: string;
  constructor(inner: QueuePort, tenant: string) {
    this.#inner = inner;
    this.#tenant = tenant;
  }
  send(body: string, options?: { delaySeconds?: number }) {
    return this.#inner.send(withTenant(body, this.#tenant), options);
  }
  sendBatch(bodies: string[]) {
    return this.#inner.sendBatch(bodies.map((b) => withTenant(b, this.#tenant)));
  }
  receive(...args: Parameters<QueuePort['receive']>) {
    return this.#inner.receive(...args);
  }
  delete(receiptHandle: string) {
    return this.#inner.delete(receiptHandle);
  }
  changeVisibility(receiptHandle: string, seconds: number) {
    return this.#inner.changeVisibility(receiptHandle, seconds);
  }
  depth() {
    return this.#inner.depth();
  }
}

class TenantEvents implements EventsPort {
  readonly #inner: EventsPort;
  readonly #tenant: string;
  constructor(inner: EventsPort, tenant: string) {
    this.#inner = inner;
    this.#tenant = tenant;
  }
  publish(events: DomainEvent[]) {
    return this.#inner.publish(events.map((e) => ({ ...e, detail: { ...e.detail, tenant: this.#tenant } })));
  }
}
