/**
 * What starts a judge derivation: a checkpoint registered as the new top model (`checkpoint.registered` with
 * `detail.topModel: true`; on AWS an EventBridge rule matches exactly that, locally a subscriber on the event log).
 * One execution per top checkpoint: the execution name is the derivation id, derived from the checkpoint id, so an
 * event delivered twice starts one derivation (the second start finds the same name with the same input; a failed
 * one is resumed).
 *
 * @example
 * await startDerivationFromTrigger(ports, { 'detail-type': 'checkpoint.registered', detail: { checkpointId: 'coder-7b:step-1200', topModel: true } });
 * // { derivationId: 'derive-coder-7b-step-1200-1a2b3c4d', executionId: '…' }
 */
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import { tenantOf } from '../../auth/tenant-ports.ts';
import { ValidationError } from '../../errors.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { CHECKPOINT_REGISTERED } from '../../registry/register-checkpoint.ts';
import { DERIVE_WORKFLOW } from './derive-judges.asl.ts';
import { derivationIdOf } from './derive-steps.ts';

/** A `checkpoint.registered` event as the rule delivers it. */
export interface TopCheckpointEvent {
  'detail-type': string;
  detail: { checkpointId?: unknown; topModel?: unknown; tenant?: string };
}

/**
 * Starts the derivation a top checkpoint asks for; undefined when the checkpoint is not a top model (or belongs to
 * another tenant: judges are the platform's). Throws for an event that is not `checkpoint.registered`, and for errors a
 * retry may fix (the delivery is retried).
 */
export async function startDerivationFromTrigger(
  ports: { workflows: WorkflowsPort },
  event: TopCheckpointEvent,
): Promise<{ derivationId: string; executionId: string } | undefined> {
  if (event['detail-type'] !== CHECKPOINT_REGISTERED) {
    throw new ValidationError(`not a derivation trigger: want a ${CHECKPOINT_REGISTERED} event`, [{ path: 'detail-type', message: `must be ${CHECKPOINT_REGISTERED}` }]);
  }
  if (event.detail.topModel !== true) return undefined;
  if (tenantOf(event.detail) !== DEFAULT_TENANT) return undefined;
  const checkpointId = event.detail.checkpointId;
  if (typeof checkpointId !== 'string' || checkpointId === '') throw new ValidationError('checkpoint.registered without a checkpointId', [{ path: 'detail.checkpointId', message: 'required' }]);
  const derivationId = derivationIdOf(checkpointId);
  const { executionId } = await ports.workflows.start(DERIVE_WORKFLOW, { name: derivationId, input: { derivationId, checkpointId } });
  return { derivationId, executionId };
}
