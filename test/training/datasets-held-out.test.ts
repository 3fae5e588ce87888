/**
 * Evals never leak into training: the dataset builder excludes every attempt of a private suite, of a held-out task,
 * of a public suite whose task's split it cannot read, and of a suite the registry does not know (unless its stored task
 * says train), without ever reading those trajectories; a train task of a public suite is kept. Suite lookups happen
 * once per build.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { trajectoryKey } from '../../lib/harness/trajectory/store-trajectory.ts';
import { parseRewardSpec, putRewardSpec } from '../../lib/judges/reward-spec.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';
import { taskRecord } from '../../lib/registry/record-codecs.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { sweepRecord } from '../../lib/sweeps/record-codecs.ts';
import { sweepBlobKeys, sweepKeys } from '../../lib/sweeps/record-keys.ts';
import { buildDataset } from '../../lib/training/datasets/build-dataset.ts';
import { heldOutCheck, HeldOutReasons } from '../../lib/training/datasets/held-out.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { putAttempt, scriptedTrajectory } from './datasets-support.ts';

const tempDir = tempDirs('flywheel-datasets-held-out-');
const NOW = new Date('2026-12-03T12:00:00.000Z');

function recordingBlobs(blobs: BlobsPort): BlobsPort & { reads: string[] } {
  const reads: string[] = [];
  return { reads, put: (k, b, o) => blobs.put(k, b, o), get: (k) => (reads.push(k), blobs.get(k)), list: (p, o) => blobs.list(p, o), delete: (k) => blobs.delete(k) };
}

function countingRecords(records: RecordsPort): RecordsPort & { gets: string[] } {
  const gets: string[] = [];
  return {
    gets,
    put: (i, o) => records.put(i, o),
    putMany: (i) => records.putMany(i),
    get: (pk, sk) => (gets.push(`${pk}|${sk}`), records.get(pk, sk)),
    query: (q) => records.query(q),
    delete: (pk, sk) => records.delete(pk, sk),
  };
}

const reasonsOf = (m: { excluded: Array<{ ref: string; reason: string }> }) => Object.fromEntries(m.excluded.map((e) => [e.ref, e.reason]));
const turn = [{ prompt: [1, 2], completion: [3, 4] }];

describe('buildDataset: held-out evals never become training data', () => {
  it('excludes a private suite (no reward spec listed), a held-out task, an unknown split and an unknown suite, unread; keeps a train task', async () => {
    const base = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      const put = (attemptId: string, suite: string, taskId: string, registry: Parameters<typeof putAttempt>[1]['registry']) =>
        putAttempt(base, { runId: 'r1', taskId, suite, n: Number(attemptId.at(-1)), status: 'passed', trajectory: scriptedTrajectory(attemptId, turn, { taskId }), registry });
      await put('r1.priv.0', 'secret-evals', 'p/1', { visibility: 'private', split: 'train' });
      await put('r1.priv.1', 'secret-evals', 'p/2', { visibility: 'private', split: 'held-out' });
      await putRewardSpec(base, parseRewardSpec({ suite: 'secret-evals', tests: 1 }));
      await put('r1.pub.0', 'mixed', 'train/1', { visibility: 'public', split: 'train' });
      await put('r1.pub.1', 'mixed', 'held/1', { visibility: 'public', split: 'held-out' });
      await put('r1.pub.2', 'mixed', 'nosplit/1', { visibility: 'public' });
      await put('r1.adhoc.0', 'adhoc', 'a/1', false);
      const blobs = recordingBlobs(base.blobs);
      const records = countingRecords(base.records);

      const manifest = await buildDataset({ records, blobs, now: base.now }, { datasetId: 'ds-held', selection: { runs: ['r1'] } });

      expect(manifest.sources.map((s) => s.attemptId)).toEqual(['r1.pub.0']);
      expect(manifest.rows).toBe(1);
      expect(reasonsOf(manifest)).toEqual({
        'attempt:r1.priv.0': 'private-suite',
        'attempt:r1.priv.1': 'private-suite',
        'attempt:r1.pub.1': 'held-out',
        'attempt:r1.pub.2': 'split-unknown',
        'attempt:r1.adhoc.0': 'suite-unknown',
      });
      // Never read: the excluded trajectories; the kept one is.
      for (const id of ['r1.priv.0', 'r1.priv.1', 'r1.pub.1', 'r1.pub.2', 'r1.adhoc.0']) expect(blobs.reads).not.toContain(trajectoryKey(id));
      expect(blobs.reads).toContain(trajectoryKey('r1.pub.0'));
      // A private suite's reward spec stays out of the manifest.
      expect(manifest.rewardSpecs).toEqual({});
      // One suite lookup per suite per build.
      for (const suite of ['secret-evals', 'mixed', 'adhoc']) expect(records.gets.filter((g) => g === `SUITE#${suite}|SUITE`)).toHaveLength(1);
    } finally {
      base.close();
    }
  });

  it('a sweep over a private suite gives no rows: every attempt excluded as private-suite, never read', async () => {
    const base = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      await base.records.put(
        sweepRecord.encode({ kind: 'sweep', sweepId: 'sw1', trigger: 'manual', requestedAt: NOW.toISOString(), checkpoints: ['ckpt-1'], suites: [{ id: 'holdout', version: 1 }], modes: ['strict'], attemptsPerTask: 2, status: 'succeeded', validatedAt: NOW.toISOString() }),
      );
      await base.blobs.put(sweepBlobKeys.plan('sw1'), JSON.stringify({ shards: [{ shardId: 'c0-s0-strict-0', shardKey: 'k', checkpoint: 'ckpt-1', suite: 'holdout', mode: 'strict', arraySize: 1 }] }));
      const runId = `${sweepKeys.shardRunId('sw1', 'ckpt-1', 'holdout', 'strict', 0)}.shard-0`;
      for (const n of [0, 1]) {
        await putAttempt(base, { runId, taskId: 'h/1', suite: 'holdout', n, status: 'passed', trajectory: scriptedTrajectory(`sw.h.${n}`, turn), registry: { visibility: 'private', split: 'held-out' } });
      }
      const blobs = recordingBlobs(base.blobs);
      const manifest = await buildDataset({ records: base.records, blobs, now: base.now }, { datasetId: 'ds-sweep-private', selection: { sweeps: ['sw1'] } });
      expect(manifest.rows).toBe(0);
      expect(manifest.shards).toEqual([]);
      expect(reasonsOf(manifest)).toEqual({ 'attempt:sw.h.0': 'private-suite', 'attempt:sw.h.1': 'private-suite' });
      expect(blobs.reads.filter((k) => k.startsWith('trajectories/'))).toEqual([]);
    } finally {
      base.close();
    }
  });

  it('reads splits from a folder suite and from the forge task record of an unregistered suite', async () => {
    const base = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      const folder = join(tempDir(), 'suite');
      mkdirSync(join(folder, 'nested'), { recursive: true });
      writeFileSync(join(folder, 'a.json'), JSON.stringify({ id: 'calc/add', split: 'train', visibility: 'public' }));
      writeFileSync(join(folder, 'nested', 'b.json'), JSON.stringify({ id: 'calc/sub', split: 'held-out', visibility: 'public' }));
      writeFileSync(join(folder, 'c.json'), JSON.stringify({ id: 'calc/mul', split: 'train', visibility: 'private' }));
      await registerSuite(base, { id: 'folder-suite', visibility: 'public', owner: 't', tasks: { kind: 'folder', path: folder }, taskIds: ['calc/add', 'calc/sub', 'calc/mul'] });
      await base.records.put(taskRecord.encode({ suite: 'forged', taskId: 'f/1', task: { id: 'f/1', split: 'train', visibility: 'public' } }));
      await base.records.put(taskRecord.encode({ suite: 'forged', taskId: 'f/2', task: { id: 'f/2', split: 'held-out', visibility: 'public' } }));

      const check = heldOutCheck(base);
      expect(await check.reasonOf({ suite: 'folder-suite', taskId: 'calc/add' })).toBeUndefined();
      expect(await check.reasonOf({ suite: 'folder-suite', taskId: 'calc/sub' })).toBe(HeldOutReasons.heldOut);
      expect(await check.reasonOf({ suite: 'folder-suite', taskId: 'calc/mul' })).toBe(HeldOutReasons.heldOut);
      expect(await check.reasonOf({ suite: 'folder-suite', taskId: 'calc/none' })).toBe(HeldOutReasons.splitUnknown);
      expect(await check.reasonOf({ suite: 'forged', taskId: 'f/1' })).toBeUndefined();
      expect(await check.reasonOf({ suite: 'forged', taskId: 'f/2' })).toBe(HeldOutReasons.heldOut);
      expect(await check.reasonOf({ suite: 'forged', taskId: 'f/3' })).toBe(HeldOutReasons.suiteUnknown);
    } finally {
      base.close();
    }
  });
});
