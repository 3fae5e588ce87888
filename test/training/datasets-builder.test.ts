import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ErrorNames, ValidationError } from '../../lib/errors.ts';
import { feedbackEventRecord } from '../../lib/feedback/record-codecs.ts';
import { toJsonl } from '../../lib/harness/trajectory/trajectory-schema.ts';
import { parseRewardSpec, putRewardSpec } from '../../lib/judges/reward-spec.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import { sweepRecord } from '../../lib/sweeps/record-codecs.ts';
import { sweepBlobKeys, sweepKeys } from '../../lib/sweeps/record-keys.ts';
import { buildDataset } from '../../lib/training/datasets/build-dataset.ts';
import { storeDecision } from '../../lib/training/decisions/store-decision.ts';
import { DatasetManifestSchema, SHARD_COLUMNS, datasetKeys } from '../../lib/training/schemas.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { decision, putAttempt, scriptedTrajectory } from './datasets-support.ts';

const tempDir = tempDirs('flywheel-datasets-');
const NOW = new Date('2026-12-03T12:00:00.000Z');

/** Blobs that remember every key read (to prove a non-consented trajectory is never read). */
function recordingBlobs(blobs: BlobsPort): BlobsPort & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    put: (k, b, o) => blobs.put(k, b, o),
    get: (k) => {
      reads.push(k);
      return blobs.get(k);
    },
    list: (p, o) => blobs.list(p, o),
    delete: (k) => blobs.delete(k),
  };
}

/** Reads shards with pyarrow in a real python3 process; prints types and per-row checks as JSON. */
const READ_SHARDS = String.raw`
import json, sys
import pyarrow.parquet as pq
out = {"files": []}
for path in sys.argv[1:]:
    t = pq.read_table(path)
    rows = t.to_pylist()
    checks = []
    for r in rows:
        n = len(r["input_ids"])
        spans = list(zip(r["span_starts"], r["span_ends"]))
        checks.append({
            "sample_id": r["sample_id"],
            "lengths_equal": n == len(r["loss_mask"]) == len(r["behaviour_logprobs"]),
            "mask_binary": all(m in (0, 1) for m in r["loss_mask"]),
            "logprobs_off_mask_zero": all(lp == 0 for lp, m in zip(r["behaviour_logprobs"], r["loss_mask"]) if m == 0),
            "spans_aligned": len(r["span_starts"]) == len(r["span_ends"]) == len(r["span_decision_ids"]) == len(r["span_hints"]) == len(r["span_verified"]),
            "spans_on_mask": all(0 <= s < e <= n and all(r["loss_mask"][i] == 1 for i in range(s, e)) for s, e in spans),
            "row": r,
        })
    out["files"].append({"schema": {f.name: str(f.type) for f in t.schema}, "rows": checks})
print(json.dumps(out))
`;

interface PyShards {
  files: Array<{ schema: Record<string, string>; rows: Array<Record<string, boolean | string> & { row: Record<string, unknown> }> }>;
}

async function readShardsWithPyarrow(blobs: BlobsPort, keys: string[]): Promise<PyShards> {
  const dir = tempDir();
  const paths: string[] = [];
  for (const [i, key] of keys.entries()) {
    const p = join(dir, `shard-${i}.parquet`);
    writeFileSync(p, (await blobs.get(key))!);
    paths.push(p);
  }
  const r = spawnSync('python3', ['-c', READ_SHARDS, ...paths], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as PyShards;
}

/** Two runs, a reward spec with an integrity penalty, an infrastructure error, a hosted (text-only) rollout, feedback with and without consent. */
async function seed(dataDir: string) {
  const ports = openLocalPorts(dataDir, { now: () => NOW });
  // suite calc: a reward spec (tests, and a 0.5 penalty for editing a test file)
  await putRewardSpec(ports, parseRewardSpec({ suite: 'calc', tests: 1, integrityPenalties: { 'test-file-edit': 0.5 } }));
  const multi = [
    { prompt: [1, 2], completion: [3, 4], logprobs: [-0.5, -0.25] },
    { prompt: [1, 2, 3, 4, 50, 51], completion: [5], logprobs: [-0.125] },
  ];
  await putAttempt(ports, { runId: 'r1', taskId: 'calc/add', suite: 'calc', n: 0, status: 'passed', trajectory: scriptedTrajectory('r1.add.0', multi, { taskId: 'calc/add', checkpoint: 'ckpt-1' }) });
  await putAttempt(ports, {
    runId: 'r1',
    taskId: 'calc/add',
    suite: 'calc',
    n: 1,
    status: 'failed',
    integrity: ['test-file-edit'],
    trajectory: scriptedTrajectory('r1.add.1', [{ prompt: [1, 2], completion: [7] }, { prompt: [9], completion: [8, 8] }], { taskId: 'calc/add' }),
  });
  await putAttempt(ports, { runId: 'r1', taskId: 'calc/add', suite: 'calc', n: 2, status: 'infrastructure-error', infrastructureTry: true, trajectory: scriptedTrajectory('r1.add.2', [{ prompt: [1], completion: [2] }], { infrastructureError: true }) });
  // suite hosted: no spec (tests alone), a text-only rollout from a hosted API
  await putAttempt(ports, { runId: 'r2', taskId: 'hosted/t', suite: 'hosted', n: 0, status: 'failed', trajectory: scriptedTrajectory('r2.t.0', [undefined, undefined], { taskId: 'hosted/t' }) });
  await putAttempt(ports, { runId: 'r2', taskId: 'hosted/t', suite: 'hosted', n: 1, status: 'ungraded', trajectory: scriptedTrajectory('r2.t.1', [{ prompt: [1], completion: [2] }]) });
  // production feedback: consented (its trajectory inline, as the ingest stores it: one JSON value), and not consented
  const prod = scriptedTrajectory('prod-1', [{ prompt: [4, 4], completion: [5, 5], logprobs: [-1, -2] }]);
  const noConsent = scriptedTrajectory('prod-2', [{ prompt: [6], completion: [6] }]);
  await ports.blobs.put('trajectories/feedback/e-yes.json', JSON.stringify(toJsonl(prod)));
  await ports.blobs.put('trajectories/feedback/e-no.json', JSON.stringify(toJsonl(noConsent)));
  const event = (eventId: string, trainingConsent: boolean, blobKey: string) =>
    feedbackEventRecord.encode({
      eventId,
      feedbackKey: `k-${eventId}`,
      kind: 'rating',
      traceId: `t-${eventId}`,
      sessionId: 's',
      turnId: 't',
      messageId: 'prod-1:m1',
      model: 'ckpt-1',
      rating: 'down',
      comment: 'there is no such tool',
      source: 'user',
      reporter: 'u',
      trainingConsent,
      trajectory: { blobKey },
      occurredAt: '2026-12-03T09:00:00.000Z',
      receivedAt: '2026-12-03T09:00:01.000Z',
      ingestId: 'i1',
    });
  await ports.records.put(event('e-yes', true, 'trajectories/feedback/e-yes.json'));
  await ports.records.put(event('e-no', false, 'trajectories/feedback/e-no.json'));
  return ports;
}

const decisionsOf = async (attemptId: string) =>
  attemptId === 'r1.add.1'
    ? [decision('r1.add.1', 1, 1), decision('r1.add.1', 2, 9, { status: 'rejected' })]
    : attemptId === 'prod-1'
      ? [decision('prod-1', 1, 2, { tokenSpan: { start: 1, end: 2 }, hint: 'there is no such tool', blobKey: 'trajectories/feedback/e-yes.json', feedbackEventId: 'e-yes' })]
      : attemptId === 'r2.t.0'
        ? [decision('r2.t.0', 1, 3)]
        : [];

describe('buildDataset', () => {
  it('writes Parquet shards pyarrow reads (exact ids, masks, log-probs, spans) and a manifest with rewards, consent and exclusions', async () => {
    const ports = await seed(tempDir());
    const blobs = recordingBlobs(ports.blobs);
    try {
      const manifest = await buildDataset(
        { ...ports, blobs },
        { datasetId: 'ds-1', selection: { runs: ['r1', 'r2'], feedback: { since: '2026-12-01T00:00:00Z' } }, tokenizer: 'tiny-bytes' },
        { rowsPerShard: 2, decisionsOf },
      );
      expect(DatasetManifestSchema.parse(manifest)).toEqual(manifest);
      // r1.add.0: 1 merged row; r1.add.1: 2 rows (non-prefix split); r2.t.0: 1 text-only row; prod-1: 1 row
      expect(manifest).toMatchObject({ datasetId: 'ds-1', rows: 5, tokenRows: 4, textOnlyRows: 1, decisionSpans: 2, tokenizer: 'tiny-bytes', format: 'flywheel.training-shards/1' });
      expect(manifest.shards.map((s) => [s.key, s.rows])).toEqual([
        [datasetKeys('ds-1').shard(0), 2],
        [datasetKeys('ds-1').shard(1), 2],
        [datasetKeys('ds-1').shard(2), 1],
      ]);
      expect(manifest.tokens).toBe(7 + 3 + 3 + 4);
      expect(manifest.decisions).toEqual(['dec-00000000000000000001', 'dec-00000000000000000002']);
      expect(manifest.rewardSpecs).toEqual({ calc: expect.objectContaining({ suite: 'calc', integrityPenalties: { 'test-file-edit': 0.5 } }) });
      expect(manifest.sources).toEqual([
        { attemptId: 'prod-1', trajectoryKey: 'trajectories/feedback/e-yes.json', feedbackEventId: 'e-yes', consent: 'feedback-consent' },
        { attemptId: 'r1.add.0', trajectoryKey: 'trajectories/attempts/r1.add.0.jsonl', runId: 'r1', consent: 'harness' },
        { attemptId: 'r1.add.1', trajectoryKey: 'trajectories/attempts/r1.add.1.jsonl', runId: 'r1', consent: 'harness' },
        { attemptId: 'r2.t.0', trajectoryKey: 'trajectories/attempts/r2.t.0.jsonl', runId: 'r2', consent: 'harness' },
      ]);
      const reasons = Object.fromEntries(manifest.excluded.map((e) => [e.ref, e.reason]));
      expect(reasons['feedback:e-no']).toBe('no training consent');
      expect(reasons['attempt:r1.add.2']).toMatch(/^infrastructure error/);
      expect(reasons['attempt:r2.t.1']).toMatch(/^no reward: ungraded/);
      expect(reasons['decision:dec-00000000000000000003']).toMatch(/text-only/);
      // consent is enforced before reading: the refused event's trajectory was never read
      expect(blobs.reads).toContain('trajectories/feedback/e-yes.json');
      expect(blobs.reads).not.toContain('trajectories/feedback/e-no.json');

      const py = await readShardsWithPyarrow(ports.blobs, manifest.shards.map((s) => s.key));
      expect(py.files[0]!.schema).toMatchObject({
        [SHARD_COLUMNS.inputIds]: 'list<element: int32 not null>',
        [SHARD_COLUMNS.lossMask]: 'list<element: int32 not null>',
        [SHARD_COLUMNS.behaviourLogprobs]: 'list<element: float not null>',
        [SHARD_COLUMNS.reward]: 'double',
        [SHARD_COLUMNS.hasTokenIds]: 'bool',
        [SHARD_COLUMNS.groupId]: 'string',
        [SHARD_COLUMNS.spanHints]: 'list<element: string not null>',
        [SHARD_COLUMNS.spanVerified]: 'list<element: bool not null>',
      });
      expect(Object.keys(py.files[0]!.schema).sort()).toEqual(Object.values(SHARD_COLUMNS).sort());
      const all = py.files.flatMap((f) => f.rows);
      for (const c of all) {
        expect(c).toMatchObject({ lengths_equal: true, mask_binary: true, logprobs_off_mask_zero: true, spans_aligned: true, spans_on_mask: true });
      }
      const bySample = Object.fromEntries(all.map((c) => [c.sample_id, c.row]));
      expect(Object.keys(bySample).sort()).toEqual(['prod-1#1', 'r1.add.0#1', 'r1.add.1#1', 'r1.add.1#2', 'r2.t.0#1']);
      expect(bySample['r1.add.0#1']).toMatchObject({
        group_id: 'r1#calc/add',
        policy_checkpoint: 'ckpt-1',
        policy_version: '3',
        input_ids: [1, 2, 3, 4, 50, 51, 5],
        loss_mask: [0, 0, 1, 1, 0, 0, 1],
        behaviour_logprobs: [0, 0, -0.5, -0.25, 0, 0, -0.125],
        reward: 1,
        has_token_ids: true,
      });
      // failed with a test-file edit under the spec: 0 - 0.5; its decision spans the first turn's completion
      expect(bySample['r1.add.1#1']).toMatchObject({ reward: -0.5, input_ids: [1, 2, 7], loss_mask: [0, 0, 1], span_starts: [2], span_ends: [3], span_decision_ids: ['dec-00000000000000000001'], span_verified: [false] });
      expect(bySample['r1.add.1#2']).toMatchObject({ reward: -0.5, group_id: 'r1#calc/add', input_ids: [9, 8, 8], span_starts: [] });
      expect(bySample['r2.t.0#1']).toMatchObject({ has_token_ids: false, input_ids: [], loss_mask: [], behaviour_logprobs: [], reward: 0, group_id: 'r2#hosted/t', span_starts: [] });
      expect(bySample['prod-1#1']).toMatchObject({ group_id: 'feedback#e-yes', reward: 0, input_ids: [4, 4, 5, 5], span_starts: [3], span_ends: [4], span_hints: ['there is no such tool'] });
    } finally {
      ports.close();
    }
  });

  it('is idempotent: the same id built again gives the same bytes; a smaller build deletes the shards it no longer has', async () => {
    const ports = await seed(tempDir());
    try {
      const input = { datasetId: 'ds-2', selection: { runs: ['r1', 'r2'] } };
      const first = await buildDataset(ports, input, { rowsPerShard: 1, decisionsOf });
      const bytes = async () => Promise.all([...first.shards.map((s) => s.key), datasetKeys('ds-2').manifest].map(async (k) => Buffer.from((await ports.blobs.get(k))!).toString('base64')));
      const before = await bytes();
      const later = openLocalPorts(ports.dataDir, { now: () => new Date(NOW.getTime() + 60_000) });
      try {
        expect(await buildDataset(later, input, { rowsPerShard: 1, decisionsOf })).toEqual(first);
        expect(await bytes()).toEqual(before);
        const smaller = await buildDataset(later, input, { rowsPerShard: 512, decisionsOf });
        expect(smaller.shards).toHaveLength(1);
        expect((await ports.blobs.list(`${datasetKeys('ds-2').root}/shard-`)).keys).toEqual([datasetKeys('ds-2').shard(0)]);
      } finally {
        later.close();
      }
    } finally {
      ports.close();
    }
  });

  it('reads the stored usable decision records by default (a rejected one never becomes a span)', async () => {
    const ports = await seed(tempDir());
    try {
      const { verified: _v, ...usable } = decision('r1.add.0', 2, 7, { tokenSpan: { start: 0, end: 1 } });
      const { verified: _r, ...rejected } = decision('r1.add.0', 1, 8, { status: 'rejected' });
      await storeDecision(ports.records, usable);
      await storeDecision(ports.records, rejected);
      const manifest = await buildDataset(ports, { datasetId: 'ds-stored', selection: { runs: ['r1'] } });
      expect(manifest.decisions).toEqual([usable.decisionId]);
      expect(manifest.decisionSpans).toBe(1);
      const none = await buildDataset(ports, { datasetId: 'ds-none', selection: { runs: ['r1'], decisions: 'none' } });
      expect(none.decisionSpans).toBe(0);
      const py = await readShardsWithPyarrow(ports.blobs, manifest.shards.map((s) => s.key));
      const row = py.files.flatMap((f) => f.rows).find((c) => c.sample_id === 'r1.add.0#1')!.row;
      expect(row).toMatchObject({ span_starts: [6], span_ends: [7], span_decision_ids: [usable.decisionId] });
    } finally {
      ports.close();
    }
  });

  it('takes every run of a sweep shards (EVAL#<shardRunId>.shard-<i>)', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      await ports.records.put(
        sweepRecord.encode({ kind: 'sweep', sweepId: 'sw1', trigger: 'manual', requestedAt: NOW.toISOString(), checkpoints: ['ckpt-1'], suites: [{ id: 'calc', version: 1 }], modes: ['strict'], attemptsPerTask: 1, status: 'succeeded', validatedAt: NOW.toISOString() }),
      );
      await ports.blobs.put(sweepBlobKeys.plan('sw1'), JSON.stringify({ shards: [{ shardId: 'c0-s0-strict-0', shardKey: 'k', checkpoint: 'ckpt-1', suite: 'calc', mode: 'strict', arraySize: 2 }] }));
      const runId = `${sweepKeys.shardRunId('sw1', 'ckpt-1', 'calc', 'strict', 0)}.shard-1`;
      await putAttempt(ports, { runId, taskId: 'calc/add', suite: 'calc', n: 0, status: 'passed', trajectory: scriptedTrajectory('sw.add.0', [{ prompt: [1], completion: [2] }]) });
      const manifest = await buildDataset(ports, { datasetId: 'ds-sweep', selection: { sweeps: ['sw1'] } });
      expect(manifest.sources).toEqual([{ attemptId: 'sw.add.0', trajectoryKey: 'trajectories/attempts/sw.add.0.jsonl', runId, consent: 'harness' }]);
      expect(manifest.rows).toBe(1);
    } finally {
      ports.close();
    }
  });

  it('refuses bad input with a ValidationError naming the field (unknown run, unknown sweep, bad id, nothing selected)', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      const issuesOf = async (input: Parameters<typeof buildDataset>[1]) => {
        const error = await buildDataset(ports, input).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).name).toBe(ErrorNames.validation);
        return (error as ValidationError).issues;
      };
      expect(await issuesOf({ datasetId: 'd', selection: { runs: ['no-such-run'] } })).toEqual([{ path: 'selection.runs[0]', message: expect.stringMatching(/no attempts recorded for run no-such-run/) }]);
      expect(await issuesOf({ datasetId: 'd', selection: { sweeps: ['no-sweep'] } })).toEqual([{ path: 'selection.sweeps[0]', message: 'no sweep no-sweep' }]);
      expect((await issuesOf({ datasetId: 'bad id#', selection: { runs: ['r'] } })).map((i) => i.path)).toEqual(['datasetId']);
      expect((await issuesOf({ datasetId: 'd', selection: {} })).map((i) => i.path)).toEqual(['selection']);
      expect((await issuesOf({ datasetId: 'd', selection: { feedback: { since: '2026-12-04T00:00:00Z', until: '2026-12-01T00:00:00Z' } } })).map((i) => i.path)).toEqual(['selection.feedback.since']);
    } finally {
      ports.close();
    }
  });
});

