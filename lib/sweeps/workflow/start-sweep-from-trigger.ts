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
 * @example
 * await startSweepFromTrigger(ports, { trigger: 'schedule', scheduledTime: '2026-12-02T02:00:00Z' }, settings);
 */
import { createHash } from 'node:crypto';
import type { SweepSettings } from '../../config/stages.ts';
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { WorkflowsPort } from '../../ports/workflows.ts';
import { startSweep, type StartSweepResult } from '../start-sweep.ts';

/** What the schedule sends (its target input, with the scheduled time filled in by Scheduler). */
export interface ScheduledSweepEvent {
  trigger: 'schedule';
  /** ISO 8601; Scheduler's `<aws.scheduler.scheduled-time>`. */
  scheduledTime: string;
}

/** An EventBridge event as the rule delivers it (`checkpoint.registered` from the Flywheel bus). */
export interface CheckpointRegisteredEvent {
  'detail-type': 'checkpoint.registered';
  detail: { checkpointId: string; sweep?: boolean };
}

export type SweepTriggerEvent = ScheduledSweepEvent | CheckpointRegisteredEvent;

export function scheduledSweepId(scheduledTime: string): string {
  const at = new Date(scheduledTime);
  if (Number.isNaN(at.getTime())) throw new ValidationError(`scheduledTime ${JSON.stringify(scheduledTime)} is not a time`, [{ path: 'scheduledTime', message: 'ISO 8601' }]);
  return `nightly-${at.toISOString().slice(0, 10).replace(/-/g, '')}`;
}

export function checkpointSweepId(checkpointId: string): string {
  const slug = checkpointId.replace(/[^A-Za-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 56);
  const hash = createHash('sha256').update(checkpointId).digest('hex').slice(0, 8);
  return `checkpoint-${slug ? `${slug}-` : ''}${hash}`;
}

/** Starts the sweep a trigger asks for; undefined when it asks for none (a checkpoint registered with `sweep: false`). */
export async function startSweepFromTrigger(
  ports: Pick<Ports, 'records' | 'now'> & { workflows: WorkflowsPort },
  event: SweepTriggerEvent,
  settings: SweepSettings,
): Promise<StartSweepResult | undefined> {
  if ('trigger' in event && event.trigger === 'schedule') {
    return startSweep(ports, { sweepId: scheduledSweepId(event.scheduledTime) }, settings, { trigger: 'schedule', requestedBy: 'schedule' });
  }
  if ('detail-type' in event && event['detail-type'] === 'checkpoint.registered') {
    if (event.detail.sweep === false) return undefined;
    const id = event.detail.checkpointId;
    return startSweep(ports, { sweepId: checkpointSweepId(id), checkpoints: [id] }, settings, { trigger: 'checkpoint', requestedBy: 'checkpoint.registered' });
  }
  throw new ValidationError('not a sweep trigger: want { trigger: "schedule", scheduledTime } or a checkpoint.registered event', [{ path: '(root)', message: 'unknown trigger' }]);
}
