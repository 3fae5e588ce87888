/**
 * The dataset builder's joins: decision records attach only to their own trajectory (two trajectories that share an
 * attemptId keep their decisions apart), a feedbackKey's CURRENT vote decides consent and reward (a later vote
 * without consent withdraws it, and the trajectory is never read), and each decision used gets the dataset in its
 * lineage. Trajectories are stored as the ingest stores an inline upload (`JSON.stringify(inline)`).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { currentVoteRecord, feedbackEventRecord } from '../../lib/feedback/record-codecs.ts';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { toJsonl } from '../../lib/harness/trajectory/trajectory-schema.ts';
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import { buildDataset } from '../../lib/training/datasets/build-dataset.ts';
import { readDecision, storeDecision } from '../../lib/training/decisions/store-decision.ts';
import { tempDirs } from '../support/temp-dirs.ts';
import { decision, putAttempt, scriptedTrajectory } from './datasets-support.ts';

const tempDir = tempDirs('flywheel-datasets-votes-');
const NOW = new Date('2026-12-03T12:00:00.000Z');

function recordingBlobs(blobs: BlobsPort): BlobsPort & { reads: string[] } {
  const reads: string[] = [];
  return { reads, put: (k, b, o) => blobs.put(k, b, o), get: (k) => (reads.push(k), blobs.get(k)), list: (p, o) => blobs.list(p, o), delete: (k) => blobs.delete(k) };
}

const strip = <T extends { verified?: boolean }>({ verified: _v, ...d }: T) => d;

function vote(eventId: string, feedbackKey: string, occurredAt: string, fields: { rating: 'up' | 'down'; trainingConsent: boolean; blobKey: string }) {
  return feedbackEventRecord.encode({
    eventId,
    feedbackKey,
    kind: 'rating',
    traceId: 't',
    sessionId: 's',
    turnId: 'u',
    messageId: 'prod-7:m1',
    model: 'ckpt-1',
    rating: fields.rating,
    comment: 'there is no such tool',
    source: 'user',
    reporter: 'u',
    trainingConsent: fields.trainingConsent,
    trajectory: { blobKey: fields.blobKey },
    occurredAt,
    receivedAt: occurredAt,
    ingestId: 'i1',
  });
}

describe('buildDataset joins', () => {
  it('two trajectories sharing an attemptId keep their own decisions; each decision used records the dataset', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      const t = scriptedTrajectory('same.0', [{ prompt: [1], completion: [2, 3] }], { taskId: 'calc/add' });
      await putAttempt(ports, { runId: 'ra', taskId: 'calc/add', suite: 'calc', n: 0, status: 'failed', trajectory: t, trajectoryKey: 'trajectories/attempts/ra/same.0.jsonl' });
      await putAttempt(ports, { runId: 'rb', taskId: 'calc/add', suite: 'calc', n: 0, status: 'failed', trajectory: t, trajectoryKey: 'trajectories/attempts/rb/same.0.jsonl' });
      const a = strip(decision('same.0', 1, 1, { blobKey: 'trajectories/attempts/ra/same.0.jsonl', tokenSpan: { start: 0, end: 1 } }));
      const b = strip(decision('same.0', 1, 2, { blobKey: 'trajectories/attempts/rb/same.0.jsonl', tokenSpan: { start: 1, end: 2 } }));
      await storeDecision(ports.records, a);
      await storeDecision(ports.records, b);
      const manifest = await buildDataset(ports, { datasetId: 'ds-a', selection: { runs: ['ra'] } });
      expect(manifest.decisions).toEqual([a.decisionId]);
      expect(manifest.decisionSpans).toBe(1);
      expect((await readDecision(ports.records, 'same.0', a.decisionId))!.lineage.datasets).toEqual(['ds-a']);
      expect((await readDecision(ports.records, 'same.0', b.decisionId))!.lineage.datasets).toEqual([]);
      const both = await buildDataset(ports, { datasetId: 'ds-ab', selection: { runs: ['ra', 'rb'] } });
      expect(both.decisions).toEqual([a.decisionId, b.decisionId]);
      expect(both.decisionSpans).toBe(2);
      expect((await readDecision(ports.records, 'same.0', a.decisionId))!.lineage.datasets).toEqual(['ds-a', 'ds-ab']);
      // Built again: the lineage lists the dataset once.
      await buildDataset(ports, { datasetId: 'ds-ab', selection: { runs: ['ra', 'rb'] } });
      expect((await readDecision(ports.records, 'same.0', b.decisionId))!.lineage.datasets).toEqual(['ds-ab']);
    } finally {
      ports.close();
    }
  });

  it('a later vote without consent withdraws it: excluded, and the trajectory is never read', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => NOW });
    const blobs = recordingBlobs(ports.blobs);
    try {
      const blobKey = 'trajectories/feedback/w1.json';
      await ports.blobs.put(blobKey, JSON.stringify(toJsonl(scriptedTrajectory('prod-7', [{ prompt: [4], completion: [5] }]))));
      await ports.records.put(vote('w1', 'k-w', '2026-12-03T09:00:00.000Z', { rating: 'down', trainingConsent: true, blobKey }));
      await ports.records.put(vote('w2', 'k-w', '2026-12-03T10:00:00.000Z', { rating: 'down', trainingConsent: false, blobKey }));
      await ports.records.put(currentVoteRecord.encode({ feedbackKey: 'k-w', eventId: 'w2', order: feedbackKeys.voteOrder('2026-12-03T10:00:00.000Z', 'w2'), occurredAt: '2026-12-03T10:00:00.000Z' }));
      const manifest = await buildDataset({ ...ports, blobs }, { datasetId: 'ds-w', selection: { feedback: { since: '2026-12-01T00:00:00Z' } } });
      expect(manifest.sources).toEqual([]);
      const reasons = Object.fromEntries(manifest.excluded.map((e) => [e.ref, e.reason]));
      expect(reasons['feedback:w1']).toMatch(/^no training consent: withdrawn by the newer vote w2/);
      expect(reasons['feedback:w2']).toBe('no training consent');
      expect(blobs.reads).not.toContain(blobKey);
    } finally {
      ports.close();
    }
  });

  it('a changed vote: the reward and the person decisions come from the current vote only', async () => {
    const ports = openLocalPorts(tempDir(), { now: () => NOW });
    try {
      const blobKey = 'trajectories/feedback/c1.json';
      await ports.blobs.put(blobKey, JSON.stringify(toJsonl(scriptedTrajectory('prod-7', [{ prompt: [4], completion: [5, 6] }]))));
      await ports.records.put(vote('c1', 'k-c', '2026-12-03T09:00:00.000Z', { rating: 'down', trainingConsent: true, blobKey }));
      await ports.records.put(vote('c2', 'k-c', '2026-12-03T10:00:00.000Z', { rating: 'up', trainingConsent: true, blobKey }));
      await ports.records.put(currentVoteRecord.encode({ feedbackKey: 'k-c', eventId: 'c2', order: feedbackKeys.voteOrder('2026-12-03T10:00:00.000Z', 'c2'), occurredAt: '2026-12-03T10:00:00.000Z' }));
      const old = strip(decision('prod-7', 1, 5, { blobKey, feedbackEventId: 'c1' }));
      await storeDecision(ports.records, old);
      const manifest = await buildDataset(ports, { datasetId: 'ds-c', selection: { feedback: { since: '2026-12-01T00:00:00Z' } } });
      expect(manifest.sources).toEqual([{ attemptId: 'prod-7', trajectoryKey: blobKey, feedbackEventId: 'c2', consent: 'feedback-consent' }]);
      expect(Object.fromEntries(manifest.excluded.map((e) => [e.ref, e.reason]))['feedback:c1']).toBe('superseded by the newer vote c2');
      expect(manifest.decisions).toEqual([]);
      expect(manifest.rows).toBe(1);
      const shard = await ports.blobs.get(manifest.shards[0]!.key);
      expect(shard).toBeDefined();
      // The rollout's reward is the thumbs-up's: its group is the current event's.
      const file = join(tempDir(), 'shard.parquet');
      writeFileSync(file, shard!);
      const py = spawnSync('python3', ['-c', 'import sys, json, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); print(json.dumps([[r["group_id"], r["reward"]] for r in t.to_pylist()]))', file], { encoding: 'utf8' });
      expect(py.status).toBe(0);
      expect(JSON.parse(py.stdout)).toEqual([['feedback#c2', 1]]);
    } finally {
      ports.close();
    }
  });
});
