/**
 * Reading and writing training run records (`TRAINRUN#<runId>` / `RUN`, through `trainingRunRecord`). Every write
 * bumps `revision` and is conditional on the revision it read, so a person's stop and a workflow step never overwrite
 * each other: the loser reads again and decides again (`updateRun` does it for its caller).
 *
 * @example
 * const run = await updateRun(ports, runId, (r) => ({ ...r, status: 'training' }));
 */
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { trainingRunRecord } from '../record-codecs.ts';
import { trainingRunRecordKeys } from '../record-keys.ts';
import type { TrainingRun } from '../schemas.ts';

/** The run, or undefined. */
export async function findRun(ports: Pick<Ports, 'records'>, runId: string): Promise<TrainingRun | undefined> {
  const key = trainingRunRecordKeys.run(runId);
  return trainingRunRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
}

/** The run; `Flywheel.NotFoundError` (404) when there is none. */
export async function requireRun(ports: Pick<Ports, 'records'>, runId: string): Promise<TrainingRun> {
  const run = await findRun(ports, runId);
  if (!run) throw new NotFoundError(`No training run ${runId}`);
  return run;
}

/** Writes a new run; false when the id is taken. */
export async function createRun(ports: Pick<Ports, 'records'>, run: TrainingRun): Promise<boolean> {
  const { written } = await ports.records.put(trainingRunRecord.encode({ ...run, revision: 0 }), { condition: { kind: 'absent' } });
  return written;
}

/** Tries of a read-modify-write that lost to another writer before it gives up (each loss is a write that landed). */
const UPDATE_TRIES = 8;

/**
 * Reads the run, applies `change` and writes it over the revision it read; on a lost race reads again and applies
 * `change` again (it must be a pure function of the run). `change` may return the run unchanged (`same`) to write
 * nothing. `updatedAt` is set from `now`.
 */
export async function updateRun(
  ports: Pick<Ports, 'records' | 'now'>,
  runId: string,
  change: (run: TrainingRun) => TrainingRun | typeof SAME,
): Promise<TrainingRun> {
  for (let i = 0; i < UPDATE_TRIES; i++) {
    const run = await requireRun(ports, runId);
    const next = change(run);
    if (next === SAME) return run;
    const revision = run.revision ?? 0;
    const written = { ...next, updatedAt: ports.now().toISOString(), revision: revision + 1 };
    const result = await ports.records.put(trainingRunRecord.encode(written), {
      condition: { kind: 'unchanged', field: 'revision', value: run.revision },
    });
    if (result.written) return written;
  }
  throw new ConflictError(`training run ${runId} kept changing under ${UPDATE_TRIES} writes: try again`);
}

/** What a change returns to write nothing. */
export const SAME = Symbol('same');
