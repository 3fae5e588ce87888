import { isDeepStrictEqual } from 'node:util';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { findCheckpoint } from './get-checkpoint.ts';
import { checkpointRecord } from './record-codecs.ts';
import { CheckpointInput, type Checkpoint } from './schemas.ts';

/** The event a registration publishes; the sweeps workflow's rule starts a sweep on it when `detail.sweep` is true. */
export const CHECKPOINT_REGISTERED = 'checkpoint.registered';

export interface CheckpointRegisteredDetail {
  checkpointId: string;
  model: string;
  parent?: string;
  registeredAt: string;
  /** Whether the registrant asked for a sweep (`sweep: false` registers quietly). */
  sweep: boolean;
  /** Whether the registrant marked it the new top model (starts a judge derivation, `lib/judges/workflow/`). */
  topModel?: boolean;
}

/**
 * Registers a checkpoint (conditional put on `CHECKPOINT#<id>`) and publishes `checkpoint.registered` with the stable
 * event id `checkpoint.registered:<id>`. Registering the same checkpoint again (a client retry) answers the stored
 * one with `created: false` and publishes again, so an event lost to a crash after the write is not lost for good;
 * the sweep it triggers is named after the checkpoint, so a repeated event never starts a second sweep. The same id
 * with other fields is refused: checkpoints are immutable.
 *
 * An `endpoint` is reached from the rollout jobs, which on AWS may send HTTPS (443) anywhere but nothing else: an
 * endpoint on another port (a vLLM server's `http://10.20.3.4:8000/v1`) must be listed in the stage's
 * `modelEndpointEgress` (`lib/config/stages.ts`; the jobs' security group, `lib/compute/infra/batch-network.ts`), or
 * every shard of the checkpoint fails to connect. Registration cannot check it (the registry does not know the
 * network); a `vllm` checkpoint is served inside the job and needs no egress.
 *
 * @example
 * const { checkpoint, created } = await registerCheckpoint(ports, {
 *   id: 'coder-7b:step-1200', model: 'coder-7b', parent: 'coder-7b:step-1000', trainingRun: 'rl-42',
 *   serving: { kind: 'endpoint', model: 'openai:coder-7b@https://models.internal.example.com/v1' } });
 */
export async function registerCheckpoint(
  ports: Pick<Ports, 'records' | 'events' | 'now'>,
  input: unknown,
): Promise<{ checkpoint: Checkpoint; created: boolean }> {
  const c = parseInput(CheckpointInput, input, 'checkpoint');
  if (c.parent) {
    const parent = await findCheckpoint(ports.records, c.parent);
    if (!parent) throw new ValidationError(`Invalid checkpoint: parent ${c.parent} is not registered`, [{ path: 'parent', message: `no checkpoint ${c.parent}` }]);
  }
  const registeredAt = ports.now().toISOString();
  const checkpoint: Checkpoint = {
    id: c.id,
    model: c.model,
    ...(c.parent ? { parent: c.parent } : {}),
    ...(c.trainingRun ? { trainingRun: c.trainingRun } : {}),
    ...(c.artifactKey ? { artifactKey: c.artifactKey } : {}),
    serving: c.serving,
    status: 'active',
    metadata: c.metadata,
    registeredAt,
  };
  const { written } = await ports.records.put(checkpointRecord.encode({ kind: 'checkpoint', ...checkpoint }), { condition: { kind: 'absent' } });
  let stored = checkpoint;
  if (!written) {
    stored = (await findCheckpoint(ports.records, c.id))!;
    const same = (['model', 'parent', 'trainingRun', 'artifactKey', 'serving', 'metadata'] as const).every((f) => isDeepStrictEqual(stored[f], checkpoint[f]));
    if (!same) {
      throw new ValidationError(`Invalid checkpoint: ${c.id} is already registered with other fields (checkpoints are immutable; register a new id)`, [
        { path: 'id', message: 'already registered with other fields' },
      ]);
    }
  }
  const detail: CheckpointRegisteredDetail = {
    checkpointId: stored.id,
    model: stored.model,
    ...(stored.parent ? { parent: stored.parent } : {}),
    registeredAt: stored.registeredAt,
    sweep: c.sweep,
    ...(c.topModel ? { topModel: true } : {}),
  };
  await ports.events.publish([{ type: CHECKPOINT_REGISTERED, id: `${CHECKPOINT_REGISTERED}:${stored.id}`, detail: { ...detail } }]);
  return { checkpoint: stored, created: written };
}
