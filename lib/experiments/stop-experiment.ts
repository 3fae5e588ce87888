/**
 * Stopping an experiment, or one of its arms (`StopInput`: `reason`, optional `arm`).
 *
 * - The whole experiment: a draft or running one becomes `stopped` (`stoppedAt`, `stopReason`), with a `stopped`
 *   change; its units get the control from then on. Stopping a stopped one changes nothing; a decided one is 409.
 * - One arm of a running experiment: added to `stoppedArms` with reason `person` (an `arm-stopped` change); its units
 *   get the control (assignment reason `arm-stopped`), every other unit keeps its arm. The control arm cannot be
 *   stopped alone (400 naming `arm`: stop the experiment instead); an arm stopped already changes nothing.
 *
 * @example
 * await stopExperiment(ports, 'exp-1', { arm: 'treatment', reason: 'users report loops' }, 'key:abc');
 */
import { ConflictError, ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { getExperiment, updateExperiment } from './experiment-store.ts';
import { StopInput, type ExperimentRecord } from './schemas.ts';

/**
 * Stops the experiment or one arm; see the file comment. `NotFoundError` for an unknown id.
 *
 * @example
 * const { record, changed } = await stopExperiment(ports, 'exp-1', { reason: 'wrong metric' }, 'key:abc');
 */
export async function stopExperiment(
  ports: Pick<Ports, 'records' | 'now'>,
  id: string,
  input: unknown,
  by: string,
): Promise<{ record: ExperimentRecord; changed: boolean }> {
  const { reason, arm } = parseInput(StopInput, input, 'stop request');
  const now = ports.now();
  const at = now.toISOString();
  if (arm === undefined) {
    return updateExperiment(
      ports.records,
      id,
      (e) => {
        if (e.status === 'stopped') return undefined;
        if (e.status === 'decided') throw new ConflictError(`experiment ${id} is decided: nothing to stop`);
        return { ...e, status: 'stopped', stoppedAt: at, stopReason: reason };
      },
      { change: 'stopped', by, detail: { reason } },
      now,
    );
  }

  // The arm is checked against the definition once, before the write loop: arms never change after creation.
  const current = await getExperiment(ports.records, id);
  const target = current.definition.arms.find((a) => a.id === arm);
  if (!target) throw new ValidationError(`Invalid stop request: arm: no arm ${arm} in experiment ${id}`, [{ path: 'arm', message: `no arm ${arm} (arms: ${current.definition.arms.map((a) => a.id).join(', ')})` }]);
  if (target.control) throw new ValidationError(`Invalid stop request: arm: ${arm} is the control`, [{ path: 'arm', message: `${arm} is the control arm: it cannot be stopped alone; stop the experiment instead` }]);
  return updateExperiment(
    ports.records,
    id,
    (e) => {
      if (e.stoppedArms.some((s) => s.arm === arm)) return undefined;
      if (e.status !== 'running') throw new ConflictError(`experiment ${id} is ${e.status}: only a running experiment's arm is stopped`);
      return { ...e, stoppedArms: [...e.stoppedArms, { arm, reason: 'person', at, detail: reason }] };
    },
    { change: 'arm-stopped', by, detail: { arm, reason: 'person', detail: reason } },
    now,
  );
}
