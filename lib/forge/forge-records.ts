/**
 * Where the forge keeps what it makes, in the single table and in blobs:
 *
 * | item | pk | sk | gsi1 |
 * | --- | --- | --- | --- |
 * | forged task | `TASK#<suite>#<id>` | `TASK` | `SUITE#<suite>` / `TASK#<id>` |
 * | forge run | `FORGERUN#<runId>` | `RUN` | `FORGERUNS` / `<startedAt>#<runId>` |
 * | baseline | `FORGERUN#<runId>` | `BASELINE` | |
 * | candidate tried | `FORGERUN#<runId>` | `CANDIDATE#<candidateId>` | |
 *
 * Blobs: `forge/suites/<suite>/tasks/<id>/{task.json,removal.patch,reference.patch,certify.log,repo.tar.gz}` and
 * `forge/runs/<runId>/…` (baseline and candidate logs). Records hold the keys, never the bodies.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordItem, RecordsPort } from '../ports/records.ts';
import { parseTask, type Task } from '../harness/task/task-schema.ts';
import type { Baseline, CandidateRecordBody, ForgeTaskStatus } from './schemas.ts';

const run = promisify(execFile);

export const taskPk = (suite: string, id: string) => `TASK#${suite}#${id}`;
export const TASK_SK = 'TASK';
export const suiteIndexPk = (suite: string) => `SUITE#${suite}`;
export const forgeRunPk = (runId: string) => `FORGERUN#${runId}`;
export const taskBlobPrefix = (suite: string, id: string) => `forge/suites/${suite}/tasks/${id}`;

/** Tasks larger than this stay out of the record (DynamoDB items are at most 400 KB). */
const MAX_INLINE_TASK_BYTES = 200_000;

export interface ForgedTaskRecord extends RecordItem {
  kind: 'forge-task';
  suite: string;
  taskId: string;
  split: Task['split'];
  status: ForgeTaskStatus;
  /** Why it was retired (a re-certification that failed). */
  retiredReason?: string;
  strategy: string;
  runId: string;
  failToPass: number;
  passToPass: number;
  /** Blob keys of the artifacts. */
  taskKey: string;
  removalPatchKey: string;
  referencePatchKey: string;
  logKey: string;
  repoKey: string;
  canary?: boolean;
  canaryOf?: string;
  /** Difficulty calibration, when run. */
  passRate?: number;
  calibration?: { model: string; attempts: number; passed: number; band?: [number, number]; inBand?: boolean; tooEasy?: boolean; at: string; runId?: string };
  lastRecertifiedAt?: string;
  retiredAt?: string;
  /** The stored task JSON (repository as a blob reference), when small enough to inline. */
  task?: Task;
  certifiedAt: string;
  updatedAt: string;
}

/** Packs a task repository (with its one-commit `.git`) into a gzipped tarball. */
export async function packRepo(dir: string): Promise<Buffer> {
  const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-tar-'));
  try {
    const file = join(scratch, 'repo.tar.gz');
    await run('tar', ['-czf', file, '-C', dir, '.']);
    return await readFile(file);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Unpacks a task repository tarball into `dir` (replacing it). */
export async function unpackRepo(tarball: Uint8Array, dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-tar-'));
  try {
    const file = join(scratch, 'repo.tar.gz');
    await writeFile(file, tarball);
    await run('tar', ['-xzf', file, '-C', dir, '--no-same-owner']);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Stores a certified task: its artifacts as blobs, then the `TASK#<suite>#<id>` record (an idempotent overwrite, so
 * a retried registration lands on the same item).
 *
 * @example
 * await registerTask(ports, { task, artifacts, runId, strategy, now: new Date() });
 */
export async function registerTask(
  ports: { records: RecordsPort; blobs: BlobsPort },
  input: {
    task: Task;
    removalPatch: string;
    referencePatch: string;
    log: string;
    repoDir: string;
    runId: string;
    strategy: string;
    now: Date;
    canaryOf?: string;
  },
): Promise<ForgedTaskRecord> {
  const { task } = input;
  const prefix = taskBlobPrefix(task.suite, task.id);
  const keys = {
    taskKey: `${prefix}/task.json`,
    removalPatchKey: `${prefix}/removal.patch`,
    referencePatchKey: `${prefix}/reference.patch`,
    logKey: `${prefix}/certify.log`,
    repoKey: `${prefix}/repo.tar.gz`,
  };
  await ports.blobs.put(keys.repoKey, await packRepo(input.repoDir), { contentType: 'application/gzip' });
  await ports.blobs.put(keys.removalPatchKey, input.removalPatch, { contentType: 'text/x-diff' });
  await ports.blobs.put(keys.referencePatchKey, input.referencePatch, { contentType: 'text/x-diff' });
  await ports.blobs.put(keys.logKey, input.log, { contentType: 'text/plain; charset=utf-8' });
  // The stored task points at its repository blob; a suite folder made from it points at the unpacked copy.
  const stored: Task = { ...task, repo: { kind: 'blob', key: keys.repoKey, baseCommit: repoCommitOf(task) } };
  await ports.blobs.put(keys.taskKey, `${JSON.stringify(stored, null, 2)}\n`, { contentType: 'application/json' });
  const at = input.now.toISOString();
  const record: ForgedTaskRecord = {
    pk: taskPk(task.suite, task.id),
    sk: TASK_SK,
    gsi1pk: suiteIndexPk(task.suite),
    gsi1sk: `TASK#${task.id}`,
    kind: 'forge-task',
    suite: task.suite,
    taskId: task.id,
    split: task.split,
    status: 'active',
    strategy: input.strategy,
    runId: input.runId,
    failToPass: task.failToPass.length,
    passToPass: task.passToPass.length,
    ...keys,
    ...(input.canaryOf ? { canary: true, canaryOf: input.canaryOf } : {}),
    // The registry reads a task record's `task` attribute as the task JSON (lib/registry/schemas.ts); big ones stay in blobs only.
    ...(JSON.stringify(stored).length <= MAX_INLINE_TASK_BYTES ? { task: stored } : {}),
    certifiedAt: at,
    updatedAt: at,
  };
  await ports.records.put(record);
  return record;
}

function repoCommitOf(task: Task): string | undefined {
  if (task.repo.kind === 'git') return task.repo.commit;
  if (task.repo.kind === 'blob') return task.repo.baseCommit;
  return undefined;
}

/** Every task record of a suite (all statuses), through the suite index. */
export async function listSuiteTasks(records: RecordsPort, suite: string): Promise<ForgedTaskRecord[]> {
  const out: ForgedTaskRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi1', partition: suiteIndexPk(suite), sort: { beginsWith: 'TASK#' }, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) if (item.kind === 'forge-task') out.push(item as ForgedTaskRecord);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** The stored task (its repository as a blob reference). */
export async function readStoredTask(blobs: BlobsPort, record: Pick<ForgedTaskRecord, 'taskKey'>): Promise<Task> {
  const body = await blobs.get(record.taskKey);
  if (!body) throw new Error(`task blob ${record.taskKey} is missing`);
  return parseTask(JSON.parse(Buffer.from(body).toString('utf8')), record.taskKey);
}

/**
 * Writes a suite as a folder `flywheel eval run --suite <dir>` loads: `<dir>/<id>.json` for each active task, its
 * repository unpacked under `<reposDir>/<id>` and referenced by a relative git path. Returns the task files written.
 *
 * @example
 * await exportSuite(ports, { suite: 'calc', dir: '.flywheel/forge/suites/calc', reposDir: '.flywheel/forge/repos/calc' });
 */
export async function exportSuite(
  ports: { records: RecordsPort; blobs: BlobsPort },
  input: { suite: string; dir: string; reposDir: string; includeRetired?: boolean; split?: Task['split'] },
): Promise<string[]> {
  const records = await listSuiteTasks(ports.records, input.suite);
  await mkdir(input.dir, { recursive: true });
  const written: string[] = [];
  for (const r of records) {
    if (r.status !== 'active' && !input.includeRetired) continue;
    if (input.split && r.split !== input.split) continue;
    const task = await readStoredTask(ports.blobs, r);
    const tarball = await ports.blobs.get(r.repoKey);
    if (!tarball) throw new Error(`repository blob ${r.repoKey} is missing`);
    const repoDir = join(input.reposDir, r.taskId);
    await unpackRepo(tarball, repoDir);
    const commit = repoCommitOf(task);
    const local: Task = {
      ...task,
      repo: commit ? { kind: 'git', url: relative(input.dir, repoDir) || '.', commit } : { kind: 'local', path: relative(input.dir, repoDir) || '.' },
      metadata: { ...task.metadata, forgeRecord: { status: r.status, ...(r.passRate !== undefined ? { passRate: r.passRate } : {}), ...(r.canary ? { canary: true } : {}) } },
    };
    const file = join(input.dir, `${r.taskId.replaceAll('/', '_')}.json`);
    await writeFile(file, `${JSON.stringify(local, null, 2)}\n`);
    written.push(file);
  }
  return written;
}

/** Records one candidate's outcome under its forge run. */
export async function recordCandidate(records: RecordsPort, body: CandidateRecordBody): Promise<void> {
  await records.put({ pk: forgeRunPk(body.runId), sk: `CANDIDATE#${body.candidateId}`, ...body });
}

/** The candidates a run tried, with their verdicts. */
export async function listCandidateRecords(records: RecordsPort, runId: string): Promise<CandidateRecordBody[]> {
  const out: CandidateRecordBody[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: forgeRunPk(runId), sort: { beginsWith: 'CANDIDATE#' }, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) out.push(item as unknown as CandidateRecordBody);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export interface ForgeRunBody {
  runId: string;
  suite: string;
  origin: string;
  sourceCommit: string;
  status: 'running' | 'finished' | 'failed';
  startedAt: string;
  finishedAt?: string;
  counts?: Record<string, number>;
  error?: string;
}

export type ForgeRunRecord = RecordItem & ForgeRunBody & { kind: 'forge-run' };

export async function putForgeRun(records: RecordsPort, run: ForgeRunBody): Promise<void> {
  await records.put({ pk: forgeRunPk(run.runId), sk: 'RUN', gsi1pk: 'FORGERUNS', gsi1sk: `${run.startedAt}#${run.runId}`, kind: 'forge-run', ...run });
}

export async function latestForgeRuns(records: RecordsPort, limit = 20): Promise<ForgeRunRecord[]> {
  const page = await records.query({ index: 'gsi1', partition: 'FORGERUNS', descending: true, limit });
  return page.items as ForgeRunRecord[];
}

export async function putBaseline(records: RecordsPort, runId: string, baseline: Baseline): Promise<void> {
  // Outcomes of a large suite would pass the 400 KB item limit: the record keeps counts and the flaky list.
  await records.put({
    pk: forgeRunPk(runId),
    sk: 'BASELINE',
    kind: 'forge-baseline',
    runs: baseline.runs,
    collected: baseline.collected,
    stable: baseline.stable.length,
    skipped: baseline.skipped.length,
    flaky: baseline.flaky.slice(0, 500),
    durationsMs: baseline.durationsMs,
    logKeys: baseline.logKeys,
  });
}
