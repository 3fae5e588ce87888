import type { SweepSettings } from '../config/stages.ts';
import type { HarnessMode } from '../harness/task/harness-mode.ts';
import { ConfigurationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import type { WorkflowsPort } from '../ports/workflows.ts';
import { parseInput } from '../shared/parse-input.ts';
import { resolveSweepSelection } from './resolve-sweep-selection.ts';
import { sweepExecutionRecord } from './record-codecs.ts';
import { sweepKeys } from './record-keys.ts';
import { SweepStartInput } from './schemas.ts';
import { findSweep } from './sweep-record.ts';
import { SWEEP_WORKFLOW } from './workflow/sweep.asl.ts';
import type { SweepExecutionInput, SweepTrigger } from './workflow/sweep-steps.ts';

export interface StartSweepResult {
  sweepId: string;
  executionId: string;
  checkpoints: string[];
  suites: string[];
  modes: HarnessMode[];
}

/** `manual-20261202T101500Z`: the default id of a sweep started by hand. */
export function defaultSweepId(trigger: SweepTrigger, at: Date): string {
  return `${trigger}-${at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
}

/**
 * Starts a sweep through the workflows port: validates the request now (so the caller gets a 400 naming every
 * unknown checkpoint or suite, not a failed execution later), resolves the selection and starts the `sweep` state
 * machine with the sweep id as the execution name and the resolved ids as its input. Starting an id that exists again
 * resumes it: the input is rebuilt from the sweep record (or, before validate-sweep ran, read back from the
 * `SWEEP#<id>` / `EXECUTION` record written before the start), so the workflows port sees the same name and input
 * and returns (or resumes) that execution rather than refusing it. Started by hand again after it finished with
 * failed shards (`partial`, `failed`), the sweep runs again for those shards only; the rows are recomputed, so
 * nothing is counted twice.
 *
 * @example
 * const { sweepId, executionId } = await startSweep({ ...ports, workflows }, { suites: ['smoke'], modes: ['strict'] }, settings);
 */
export async function startSweep(
  ports: Pick<Ports, 'records' | 'now'> & { workflows?: WorkflowsPort },
  body: unknown,
  settings: SweepSettings,
  meta: { trigger?: SweepTrigger; requestedBy?: string } = {},
): Promise<StartSweepResult> {
  const req = parseInput(SweepStartInput, body, 'sweep request');
  if (!ports.workflows) throw new ConfigurationError('this process has no workflows port: sweeps cannot be started here');
  const trigger = meta.trigger ?? 'manual';
  const now = ports.now();
  const sweepId = req.sweepId ?? defaultSweepId(trigger, now);
  const execKey = sweepKeys.execution(sweepId);
  const existing = await findSweep(ports.records, sweepId);
  const pending = sweepExecutionRecord.decodeIfPresent(await ports.records.get(execKey.pk, execKey.sk))?.input;
  let input: SweepExecutionInput;
  if (existing) {
    input = {
      sweepId,
      trigger: existing.trigger,
      checkpoints: existing.checkpoints,
      suites: existing.suites.map((s) => s.id),
      modes: existing.modes,
      attemptsPerTask: existing.attemptsPerTask,
      requestedAt: existing.requestedAt,
      ...(existing.requestedBy ? { requestedBy: existing.requestedBy } : {}),
    };
  } else if (pending) {
    // Started before but not validated yet (a trigger delivered twice, a client retry): the very same input, checked
    // again, so a selection that went bad since (a suite retired) is a 400 here rather than a refused run again.
    await resolveSweepSelection(ports.records, { checkpoints: pending.checkpoints, suites: pending.suites, modes: pending.modes, attemptsPerTask: pending.attemptsPerTask }, settings);
    input = pending;
  } else {
    const sel = await resolveSweepSelection(ports.records, req, settings);
    input = {
      sweepId,
      trigger,
      checkpoints: sel.checkpoints.map((c) => c.id),
      suites: sel.suites.map((s) => s.id),
      modes: sel.modes,
      attemptsPerTask: sel.attemptsPerTask,
      requestedAt: now.toISOString(),
      ...(meta.requestedBy ? { requestedBy: meta.requestedBy } : {}),
    };
    const { written } = await ports.records.put(sweepExecutionRecord.encode({ kind: 'sweep-execution', sweepId, input }), { condition: { kind: 'absent' } });
    if (!written) input = sweepExecutionRecord.decode((await ports.records.get(execKey.pk, execKey.sk))!).input;
  }
  // Asked by hand to start a sweep that finished with failed shards: run it again to retry them (the finished ones
  // are kept: plan-shards marks them done). A trigger delivered twice never does; it gets the sweep as it is.
  const again = trigger === 'manual' && (existing?.status === 'partial' || existing?.status === 'failed');
  // A retry runs the recorded selection again: checked again, so a suite retired since is a 400 here.
  if (again) await resolveSweepSelection(ports.records, { checkpoints: input.checkpoints, suites: input.suites, modes: input.modes, attemptsPerTask: input.attemptsPerTask }, settings);
  const { executionId } = await ports.workflows.start(SWEEP_WORKFLOW, { name: sweepId, input, ...(again ? { again } : {}) });
  // Where the report finds the execution to describe, and what a second start of this id reuses.
  await ports.records.put(sweepExecutionRecord.encode({ kind: 'sweep-execution', sweepId, input, executionId, startedAt: now.toISOString() }));
  return { sweepId, executionId, checkpoints: input.checkpoints!, suites: input.suites!, modes: input.modes! };
}
