/**
 * The experiment store and lifecycle use cases on the local ports (real SQLite records): writers that race all land
 * (revision-conditional writes retried) with a gap-free history; transitions the status forbids are refused; a
 * malformed stored record fails where it is read, naming the field; and the assignment cache answers from memory,
 * reading the records only when stale or asked for an experiment it lacks (at most once per interval).
 */
import { describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors.ts';
import { AssignmentCache } from '../../lib/experiments/assignment/assignment-cache.ts';
import { assignUnits } from '../../lib/experiments/assignment/assign-units.ts';
import { createExperimentRecord, getExperiment, listChanges, listExperiments, updateExperiment } from '../../lib/experiments/experiment-store.ts';
import { experimentKeys } from '../../lib/experiments/record-keys.ts';
import { ExperimentInput, type ExperimentRecord } from '../../lib/experiments/schemas.ts';
import { startExperiment } from '../../lib/experiments/start-experiment.ts';
import { stopExperiment } from '../../lib/experiments/stop-experiment.ts';
import type { QueryInput, RecordsPort } from '../../lib/ports/records.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-experiments-store-');
const NOW = new Date('2026-12-03T10:00:00Z');

function record(id: string, arms = 3): ExperimentRecord {
  return {
    definition: ExperimentInput.parse({
      id,
      name: id,
      arms: Array.from({ length: arms }, (_, i) => ({ id: i === 0 ? 'control' : `t${i}`, checkpoint: `ckpt-${i}`, control: i === 0 })),
      metrics: { primary: 'accepted' },
      plannedUnitsPerArm: 100,
    }),
    status: 'draft',
    plannedUnitsPerArm: 100,
    rampStep: 0,
    stoppedArms: [],
    origin: { kind: 'person', by: 'test' },
    createdAt: NOW.toISOString(),
    revision: 0,
  };
}

function open(): LocalPorts {
  return openLocalPorts(tempDir(), { now: () => NOW });
}

describe('experiment store', () => {
  it('lands every racing writer once, with a gap-free history', async () => {
    const ports = open();
    try {
      expect((await createExperimentRecord(ports.records, record('exp-race', 8), 'alice', NOW)).created).toBe(true);
      expect((await createExperimentRecord(ports.records, record('exp-race', 8), 'bob', NOW)).created).toBe(false);
      await startExperiment(ports, 'exp-race', 'alice');
      // Seven people stop seven arms at once: each read-change-write that loses reads again.
      const results = await Promise.all(Array.from({ length: 7 }, (_, i) => stopExperiment(ports, 'exp-race', { arm: `t${i + 1}`, reason: `r${i}` }, `p${i}`)));
      expect(results.every((r) => r.changed)).toBe(true);
      const stored = await getExperiment(ports.records, 'exp-race');
      expect(stored.stoppedArms.map((s) => s.arm).sort()).toEqual(['t1', 't2', 't3', 't4', 't5', 't6', 't7']);
      expect(stored.revision).toBe(8);
      const changes = await listChanges(ports.records, 'exp-race');
      expect(changes.map((c) => c.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect(changes.map((c) => c.change)).toEqual(['created', 'started', ...Array(7).fill('arm-stopped')]);

      // A mutation that returns undefined writes nothing; one that throws refuses.
      expect((await updateExperiment(ports.records, 'exp-race', () => undefined, { change: 'ramped', by: 'x', detail: {} }, NOW)).changed).toBe(false);
      await stopExperiment(ports, 'exp-race', { reason: 'done' }, 'alice');
      await expect(startExperiment(ports, 'exp-race', 'alice')).rejects.toBeInstanceOf(ConflictError);
      await expect(stopExperiment(ports, 'exp-race', { arm: 'control', reason: 'x' }, 'alice')).rejects.toBeInstanceOf(ValidationError);
      await expect(startExperiment(ports, 'nope', 'alice')).rejects.toBeInstanceOf(NotFoundError);
      expect((await listChanges(ports.records, 'exp-race')).length).toBe(10);
      expect((await listExperiments(ports.records, { status: 'stopped' })).items.map((e) => e.definition.id)).toEqual(['exp-race']);
      expect((await listExperiments(ports.records, { status: 'running' })).items).toEqual([]);
    } finally {
      ports.close();
    }
  });

  it('refuses a malformed stored experiment where it is read, naming the field', async () => {
    const ports = open();
    try {
      await createExperimentRecord(ports.records, record('exp-bad'), 'alice', NOW);
      const key = experimentKeys.experiment('exp-bad');
      const item = (await ports.records.get(key.pk, key.sk))!;
      const definition = item.definition as { arms: Array<Record<string, unknown>> };
      definition.arms[1]!.weight = -3;
      await ports.records.put(item);
      const read = getExperiment(ports.records, 'exp-bad');
      await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
      await expect(read).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', pk: key.pk, sk: key.sk, field: 'definition.arms.1.weight' });
    } finally {
      ports.close();
    }
  });
});

describe('AssignmentCache', () => {
  it('reads the records only when stale, or once per interval for an experiment it lacks', async () => {
    const ports = open();
    try {
      let queries = 0;
      const counting: RecordsPort = {
        put: (item, options) => ports.records.put(item, options),
        putMany: (items) => ports.records.putMany(items),
        get: (pk, sk) => ports.records.get(pk, sk),
        delete: (pk, sk) => ports.records.delete(pk, sk),
        query: (input: QueryInput) => {
          queries++;
          return ports.records.query(input);
        },
      };
      await createExperimentRecord(ports.records, record('exp-a'), 'alice', NOW);
      await startExperiment(ports, 'exp-a', 'alice');
      let clock = 1_000_000;
      const cache = new AssignmentCache(counting, { refreshMs: 5000, missReloadMs: 1000, now: () => clock });

      for (let i = 0; i < 500; i++) {
        const { assignments } = await assignUnits(cache, { unitIds: [`u-${i}`, `v-${i}`] });
        expect(assignments).toHaveLength(2);
      }
      expect([cache.loads, queries]).toEqual([1, 1]);

      // Started meanwhile: unseen until the copy is stale (or asked for by name).
      await createExperimentRecord(ports.records, record('exp-b'), 'alice', NOW);
      await startExperiment(ports, 'exp-b', 'alice');
      clock += 500;
      expect((await assignUnits(cache, { unitIds: ['u-1'] })).assignments.map((a) => a.experiment)).toEqual(['exp-a']);
      expect(queries).toBe(1);
      // Asked for by name: one reload, then none for a made-up name within the interval.
      clock += 600;
      expect((await assignUnits(cache, { unitIds: ['u-1'], experiments: ['exp-b'] })).assignments.map((a) => a.experiment)).toEqual(['exp-b']);
      expect(queries).toBe(2);
      for (let i = 0; i < 50; i++) await assignUnits(cache, { unitIds: ['u-1'], experiments: [`made-up-${i}`] });
      expect(queries).toBe(2);

      // Stale: the next request reloads and sees the stop.
      await stopExperiment(ports, 'exp-a', { reason: 'done' }, 'alice');
      clock += 6000;
      expect((await assignUnits(cache, { unitIds: ['u-1'] })).assignments.map((a) => a.experiment)).toEqual(['exp-b']);
      expect(queries).toBe(3);
    } finally {
      ports.close();
    }
  });
});
