/**
 * The sweep triggers that are not a person: the stage's schedule (EventBridge Scheduler) and a newly registered
 * checkpoint (the `checkpoint.registered` rule). Both land in one Lambda (`functions/sweeps/start-sweep.ts`), which
 * turns the trigger into a sweep id and calls `startSweep` (the same use case as `flywheel sweep start`).
 *
 * Sweep ids are derived from the trigger, so a trigger delivered twice (Scheduler and EventBridge deliver at least
 * once) starts one sweep: the second start finds the same execution name with the same input.
 * - schedule: `nightly-<yyyymmdd>` of the scheduled time (the active suites × the newest checkpoints);
 * - checkpoint: `checkpoint-<id as letters, digits, ->-<8 hex of the id>` over that checkpoint only (the hash keeps
 *   two ids that differ only in punctuation apart).
 *
 * A trigger whose sweep cannot start for a reason no retry fixes (no active suite, a retired checkpoint, a selection
 * over the shard limit) is refused, not thrown: `sweep.refused` is published (the Workflows stack routes it to the
 * alarm topic) with what was wrong, and the answer says so: the Lambda succeeds, so Scheduler and EventBridge do not
 * retry the same hopeless request, and someone learns why last night's sweep did not run.
 *
 * @example
 * await startSweepFromTrigger(ports, { trigger: 'schedule', scheduledTime: '2026-12-02T02:00:00Z' }, settings);
 */
import { executionNameFor } from '../../shared/execution-name.ts';
import { createHash } from 'node:crypto';
import type { SweepSettings } from '../../config/stages.ts';
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { FieldIssue } from '../../shared/field-issues.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { startSweep, type StartSweepResult } from '../start-sweep.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import { tenantOf } from '../../auth/tenant-ports.ts';

/** What the schedule sends (its target input, with the scheduled time filled in by Scheduler). */
export interface ScheduledSweepEvent {
  trigger: 'schedule';
  /** ISO 8601; Scheduler's `<aws.scheduler.scheduled-time>`. */
  scheduledTime: string;
}

/** An EventBridge event as the rule delivers it (`checkpoint.registered` from the Flywheel bus). */
export interface CheckpointRegisteredEvent {
  'detail-type': 'checkpoint.registered';
  /** `tenant` as the registry publishes it (absent: the default tenant). */
  detail: { checkpointId: string; sweep?: boolean; tenant?: string };
}

export type SweepTriggerEvent = ScheduledSweepEvent | CheckpointRegisteredEvent;

export function scheduledSweepId(scheduledTime: string): string {
  const at = new Date(scheduledTime);
  if (Number.isNaN(at.getTime())) throw new ValidationError(`scheduledTime ${JSON.stringify(scheduledTime)} is not a time`, [{ path: 'scheduledTime', message: 'ISO 8601' }]);
  return `nightly-${at.toISOString().slice(0, 10).replace(/-/g, '')}`;
}

export function checkpointSweepId(checkpointId: string): string {
  return executionNameFor('checkpoint', checkpointId, 56);
}

/** Published when a trigger's sweep cannot start (EventBridge detail-type), id `sweep.refused:<sweepId>:<reason hash>`. */
export const SWEEP_REFUSED = 'sweep.refused';

/** A trigger's sweep that could not start, and why. */
export interface RefusedSweep {
  refused: { sweepId: string; trigger: 'schedule' | 'checkpoint'; message: string; issues: FieldIssue[] };
}

/**
 * Starts the sweep a trigger asks for; undefined when it asks for none (a checkpoint registered with `sweep: false`);
 * `{ refused }` when its request is one no retry fixes. Throws for an event that is no trigger, and for errors a retry
 * may fix (the store or Step Functions unavailable), so the delivery is retried.
 */
export async function startSweepFromTrigger(
  ports: Pick<Ports, 'records' | 'now' | 'events'> & { workflows: WorkflowsPort },
  event: SweepTriggerEvent,
  settings: SweepSettings,
): Promise<StartSweepResult | RefusedSweep | undefined> {
  const attempt = async (sweepId: string, trigger: 'schedule' | 'checkpoint', start: () => Promise<StartSweepResult>) => {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      // No double quotes: the alarm topic's notice template fills the message into a JSON string as it is.
      const refused = { sweepId, trigger, message: error.message.replaceAll('"', "'"), issues: error.issues.slice(0, 10) };
      // The same refusal delivered again is one event; a refusal for another reason (after a fix, a new one) is news.
      const reason = createHash('sha256').update(refused.message).digest('hex').slice(0, 8);
      await ports.events.publish([{ type: SWEEP_REFUSED, id: `${SWEEP_REFUSED}:${sweepId}:${reason}`, detail: refused }]);
      return { refused };
    }
  };
  if ('trigger' in event && event.trigger === 'schedule') {
    const sweepId = scheduledSweepId(event.scheduledTime);
    return attempt(sweepId, 'schedule', () => startSweep(ports, { sweepId }, settings, { trigger: 'schedule', requestedBy: 'schedule' }));
  }
  if ('detail-type' in event && event['detail-type'] === 'checkpoint.registered') {
    if (event.detail.sweep === false) return undefined;
    // Sweeps run over the default tenant's records: another tenant's checkpoint id must not start one on a namesake.
    if (tenantOf(event.detail) !== DEFAULT_TENANT) return undefined;
    const id = event.detail.checkpointId;
    const sweepId = checkpointSweepId(id);
    return attempt(sweepId, 'checkpoint', () => startSweep(ports, { sweepId, checkpoints: [id] }, settings, { trigger: 'checkpoint', requestedBy: 'checkpoint.registered' }));
  }
  throw new ValidationError('not a sweep trigger: want { trigger: "schedule", scheduledTime } or a checkpoint.registered event', [{ path: '(root)', message: 'unknown trigger' }]);
}
