/**
 * Starting an experiment: a draft becomes `running` at the first ramp step (`startedAt`, `rampStep` 0,
 * `rampStepSince`), with a `started` change. Starting a running experiment again changes nothing (a retried start is
 * not an error); a stopped or decided one cannot start again (409: create a new experiment, with a new id).
 *
 * @example
 * const { record, changed } = await startExperiment(ports, 'exp-1', 'key:abc');
 */
import { ConflictError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { updateExperiment } from './experiment-store.ts';
import type { ExperimentRecord } from './schemas.ts';

/**
 * Moves a draft to running; see the file comment. `NotFoundError` for an unknown id.
 *
 * @example
 * await startExperiment(ports, 'exp-1', 'key:abc'); // { record: { status: 'running', rampStep: 0, … }, changed: true }
 */
export async function startExperiment(ports: Pick<Ports, 'records' | 'now'>, id: string, by: string): Promise<{ record: ExperimentRecord; changed: boolean }> {
  const now = ports.now();
  const at = now.toISOString();
  return updateExperiment(
    ports.records,
    id,
    (e) => {
      if (e.status === 'running') return undefined;
      if (e.status !== 'draft') throw new ConflictError(`experiment ${id} is ${e.status}: only a draft starts (create a new experiment to run it again)`);
      return { ...e, status: 'running', startedAt: at, rampStep: 0, rampStepSince: at };
    },
    { change: 'started', by, detail: { rampStep: 0 } },
    now,
  );
}
