/**
 * The registry's reads and conditional writes, shared by its use cases: a judge's head and versions, a version's
 * status as the head says it is.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { judgeRefString, parseJudgeRef, type JudgeRef } from '../judge-identity.ts';
import { judgeHeadRecord, judgeVersionRecord } from './record-codecs.ts';
import { judgeKeys } from './record-keys.ts';
import { JudgeNameSchema, JudgeVersionSchema, type JudgeHead, type JudgeVersionRecord } from './schemas.ts';
import { JudgeNotFoundError } from './registry-errors.ts';

/** A judge reference as callers give it: `{ name, version }`, `name@version`, or (where allowed) a bare name. */
export type JudgeRefInput = JudgeRef | string;

/** Parses a reference; `requireVersion` refuses a bare name. */
export function toRef(input: JudgeRefInput, requireVersion: true): JudgeRef;
export function toRef(input: JudgeRefInput, requireVersion?: boolean): { name: string; version?: string };
export function toRef(input: JudgeRefInput, requireVersion = false): { name: string; version?: string } {
  const raw = typeof input === 'string' ? parseJudgeRef(input) : input;
  const name = JudgeNameSchema.safeParse(raw.name);
  if (!name.success) throw new ValidationError(`Invalid judge name ${JSON.stringify(raw.name)}`, [{ path: 'name', message: name.error.issues[0]?.message ?? 'invalid' }]);
  if (raw.version === undefined) {
    if (requireVersion) throw new ValidationError(`Name a version: ${raw.name}@<version>`, [{ path: 'version', message: 'required' }]);
    return { name: raw.name };
  }
  const version = JudgeVersionSchema.safeParse(raw.version);
  if (!version.success) throw new ValidationError(`Invalid judge version ${JSON.stringify(raw.version)}`, [{ path: 'version', message: '12 hex characters' }]);
  return { name: raw.name, version: raw.version };
}

export async function readHead(records: RecordsPort, name: string): Promise<JudgeHead | undefined> {
  const k = judgeKeys.head(name);
  return judgeHeadRecord.decodeIfPresent(await records.get(k.pk, k.sk));
}

export async function requireHead(records: RecordsPort, name: string): Promise<JudgeHead> {
  const head = await readHead(records, name);
  if (!head) throw new JudgeNotFoundError(name);
  return head;
}

export async function readVersion(records: RecordsPort, ref: JudgeRef): Promise<JudgeVersionRecord | undefined> {
  const k = judgeKeys.version(ref.name, ref.version);
  return judgeVersionRecord.decodeIfPresent(await records.get(k.pk, k.sk));
}

export async function requireVersion(records: RecordsPort, ref: JudgeRef): Promise<JudgeVersionRecord> {
  const v = await readVersion(records, ref);
  if (!v) throw new JudgeNotFoundError(judgeRefString(ref));
  return v;
}

/** Every version of a judge, oldest registration first. */
export async function readVersions(records: RecordsPort, name: string): Promise<JudgeVersionRecord[]> {
  const out: JudgeVersionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: judgeKeys.partition(name), sort: { beginsWith: judgeKeys.versionPrefix }, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map((i) => judgeVersionRecord.decode(i)));
    cursor = page.cursor;
  } while (cursor);
  return out.sort((a, b) => a.registeredAt.localeCompare(b.registeredAt) || a.version.localeCompare(b.version));
}

/**
 * A version's status as the head says it is: only the head's promoted version is `promoted` (a version record left
 * `promoted` by a crash between the head's write and its own reads as `demoted`).
 */
export function withEffectiveStatus(v: JudgeVersionRecord, head: JudgeHead | undefined): JudgeVersionRecord {
  if (head?.promoted === v.version) return v.status === 'promoted' ? v : { ...v, status: 'promoted' };
  return v.status === 'promoted' ? { ...v, status: 'demoted' } : v;
}

/**
 * Writes the head over the one that was read (`unchanged` on its revision): false when another writer got there
 * first, and the caller reads again and decides again.
 */
export async function writeHeadOver(records: RecordsPort, read: JudgeHead | undefined, next: Omit<JudgeHead, 'revision'> & { revision?: string }): Promise<boolean> {
  const item = judgeHeadRecord.encode({ ...next, revision: randomUUID() });
  const { written } = await records.put(item, { condition: read ? { kind: 'unchanged', field: 'revision', value: read.revision } : { kind: 'absent' } });
  return written;
}

/** The stored item's attribute that changes on every write of a version record (kept out of the API's view). */
const VERSION_REVISION = 'versionRevision';

/** A version record as read for a conditional update: the record and the revision it was stored with. */
export interface VersionRead {
  record: JudgeVersionRecord;
  revision: string | undefined;
}

export async function readVersionForUpdate(records: RecordsPort, ref: JudgeRef): Promise<VersionRead | undefined> {
  const k = judgeKeys.version(ref.name, ref.version);
  const item = await records.get(k.pk, k.sk);
  const record = judgeVersionRecord.decodeIfPresent(item);
  if (!record || !item) return undefined;
  const revision = item[VERSION_REVISION];
  return { record, revision: typeof revision === 'string' ? revision : undefined };
}

export async function requireVersionForUpdate(records: RecordsPort, ref: JudgeRef): Promise<VersionRead> {
  const v = await readVersionForUpdate(records, ref);
  if (!v) throw new JudgeNotFoundError(judgeRefString(ref));
  return v;
}

/**
 * Writes a version record over the one that was read (`unchanged` on its revision): false when another writer changed
 * it first (a retirement, a demotion), and the caller reads again and decides again.
 */
export async function writeVersionOver(records: RecordsPort, read: VersionRead, next: JudgeVersionRecord): Promise<boolean> {
  const { written } = await records.put({ ...judgeVersionRecord.encode(next), [VERSION_REVISION]: randomUUID() }, { condition: { kind: 'unchanged', field: VERSION_REVISION, value: read.revision } });
  return written;
}

/** Writes a version record unconditionally (a new revision, so conditional writers that read it before lose). */
export async function writeVersion(records: RecordsPort, v: JudgeVersionRecord): Promise<void> {
  await records.put({ ...judgeVersionRecord.encode(v), [VERSION_REVISION]: randomUUID() });
}

/** Attempts at a conditional head write before giving up with a conflict. */
export const HEAD_WRITE_ATTEMPTS = 5;
