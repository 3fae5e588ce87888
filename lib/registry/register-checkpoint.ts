import { isDeepStrictEqual } from 'node:util';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { executionNameFor } from '../shared/execution-name.ts';
import { parseInput } from '../shared/parse-input.ts';
import { findCheckpoint } from './get-checkpoint.ts';
import { listAllSuites } from './list-suites.ts';
import { checkpointRecord } from './record-codecs.ts';
import { CheckpointInput, type Checkpoint, type StartedSweep } from './schemas.ts';

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
 * The id of the sweep the `checkpoint.registered` trigger starts for a checkpoint: the trigger derives it from the
 * checkpoint id alone (`checkpointSweepId` of `lib/sweeps/workflow/start-sweep-from-trigger.ts`, the same function of
 * the same id), so a retried registration names the one sweep that runs.
 *
 * @example
 * registeredCheckpointSweepId('coder-7b:step-1200'); // 'checkpoint-coder-7b-step-1200-<8 hex>'
 */
export function registeredCheckpointSweepId(checkpointId: string): string {
  return executionNameFor('checkpoint', checkpointId, 56);
}

export interface RegisterCheckpointOptions {
  /**
   * Whether the trigger sweeps this registrant's checkpoints: it sweeps the default tenant's only (the sweep workflow
   * runs over the root ports), so another tenant's registration names no sweep. Default true.
   */
  sweepsRun?: boolean;
}

/**
 * Registers a checkpoint (conditional put on `CHECKPOINT#<id>`) and publishes `checkpoint.registered` with the stable
 * event id `checkpoint.registered:<id>`. Registering the same checkpoint again (a client retry) answers the stored
 * one with `created: false` and publishes again, so an event lost to a crash after the write is not lost for good;
 * the sweep it triggers is named after the checkpoint, so a repeated event never starts a second sweep. The same id
 * with other fields is refused: checkpoints are immutable. The answer names that sweep (`sweeps`: its id and the
 * suites it covers, the active ones), unless the registrant asked for none or no suite is active (the trigger then
 * refuses it, with `sweep.refused`).
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
  options: RegisterCheckpointOptions = {},
): Promise<{ checkpoint: Checkpoint; created: boolean; sweeps: StartedSweep[] }> {
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
  const sweeps: StartedSweep[] = [];
  if (c.sweep && options.sweepsRun !== false && stored.status === 'active') {
    // The trigger's selection: this checkpoint on every active suite (resolveSweepSelection's default).
    const suites = (await listAllSuites(ports)).filter((s) => s.status === 'active').map((s) => s.id);
    if (suites.length > 0) sweeps.push({ sweepId: registeredCheckpointSweepId(stored.id), suites });
  }
  return { checkpoint: stored, created: written, sweeps };
}
