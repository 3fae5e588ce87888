/** The forge's records and blobs (layout in `record-keys.ts`): certified tasks, runs, baselines, candidates tried. */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import { parseTask, type Task } from '../harness/task/task-schema.ts';
import { candidateRecord, forgeBaselineRecord, forgedTaskRecord, forgeRunRecord, type ForgedTaskRecord, type ForgeRunRecord } from './record-codecs.ts';
import { ALL_FORGE_RUNS, CANDIDATE_PREFIX, forgeRunPk, suiteIndexPk, TASK_INDEX_PREFIX, taskBlobPrefix } from './record-keys.ts';
import type { Baseline, CandidateRecordBody } from './schemas.ts';

const run = promisify(execFile);

/** Tasks larger than this stay out of the record (DynamoDB items are at most 400 KB). */
const MAX_INLINE_TASK_BYTES = 200_000;

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
  await ports.records.put(forgedTaskRecord.encode(record));
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
    const page = await records.query({ index: 'gsi1', partition: suiteIndexPk(suite), sort: { beginsWith: TASK_INDEX_PREFIX }, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) if (item.kind === 'forge-task') out.push(forgedTaskRecord.decode(item));
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
  await records.put(candidateRecord.encode(body));
}

/** The candidates a run tried, with their verdicts. */
export async function listCandidateRecords(records: RecordsPort, runId: string): Promise<CandidateRecordBody[]> {
  const out: CandidateRecordBody[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: forgeRunPk(runId), sort: { beginsWith: CANDIDATE_PREFIX }, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map(candidateRecord.decode));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

export type ForgeRunBody = Omit<ForgeRunRecord, 'kind'>;

export async function putForgeRun(records: RecordsPort, run: ForgeRunBody): Promise<void> {
  await records.put(forgeRunRecord.encode({ kind: 'forge-run', ...run }));
}

/** The newest forge runs first. */
export async function latestForgeRuns(records: RecordsPort, limit = 20): Promise<ForgeRunRecord[]> {
  const page = await records.query({ index: 'gsi1', partition: ALL_FORGE_RUNS, descending: true, limit });
  return page.items.map(forgeRunRecord.decode);
}

export async function putBaseline(records: RecordsPort, runId: string, baseline: Baseline): Promise<void> {
  // Outcomes of a large suite would pass the 400 KB item limit: the record keeps counts and the flaky list.
  await records.put(
    forgeBaselineRecord.encode({
      kind: 'forge-baseline',
      runId,
      runs: baseline.runs,
      collected: baseline.collected,
      stable: baseline.stable.length,
      skipped: baseline.skipped.length,
      flaky: baseline.flaky.slice(0, 500),
      durationsMs: baseline.durationsMs,
      logKeys: baseline.logKeys,
    }),
  );
}
