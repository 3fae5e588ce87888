import type { SweepSettings } from '../config/stages.ts';
import { ValidationError } from '../errors.ts';
import { parseInput } from '../shared/parse-input.ts';
import { sweepKeys } from './record-keys.ts';
import { resolveSweepSelection } from './resolve-sweep-selection.ts';
import { SweepExecutionInputSchema, type SweepRecordBody } from './schemas.ts';
import { findSweep, putSweep } from './sweep-record.ts';
import type { SweepExecutionInput, SweepStepPorts, ValidatedSweep } from './workflow/sweep-steps.ts';

/**
 * Step `validate-sweep`: checks the request (checkpoints and suites exist and are not retired, modes are strict or
 * lenient, attempts per task 1–100, the plan fits one sweep) and records the resolved selection as `SWEEP#<id>`.
 * Throws `Flywheel.ValidationError` naming every offending field; the state machine does not retry it.
 *
 * Resuming: when the sweep record exists (a re-run of the same sweep id), its selection is kept as it was, even if
 * newer checkpoints were registered since, so a resumed sweep plans the very same shards.
 *
 * @example
 * const v = await validateSweep(ports, { sweepId: 'nightly-2026-12-02', trigger: 'schedule', requestedAt: '2026-12-02T02:00:00Z' }, settings);
 */
export async function validateSweep(ports: SweepStepPorts, input: SweepExecutionInput, settings: SweepSettings): Promise<ValidatedSweep> {
  const req = parseInput(SweepExecutionInputSchema, input, 'sweep request');
  const existing = await findSweep(ports.records, req.sweepId);
  if (existing) {
    if (req.attemptsPerTask !== undefined && req.attemptsPerTask !== existing.attemptsPerTask) {
      throw new ValidationError(`Invalid sweep request: sweep ${req.sweepId} already runs ${existing.attemptsPerTask} attempts per task; use another sweep id`, [
        { path: 'attemptsPerTask', message: `sweep ${req.sweepId} exists with ${existing.attemptsPerTask}` },
      ]);
    }
    return summary(existing);
  }
  const sel = await resolveSweepSelection(ports.records, req, settings);
  const body: SweepRecordBody = {
    kind: 'sweep',
    sweepId: req.sweepId,
    trigger: req.trigger,
    requestedAt: req.requestedAt,
    ...(req.requestedBy ? { requestedBy: req.requestedBy } : {}),
    checkpoints: sel.checkpoints.map((c) => c.id),
    suites: sel.suites.map((s) => ({ id: s.id, version: s.version })),
    modes: sel.modes,
    attemptsPerTask: sel.attemptsPerTask,
    status: 'validated',
    validatedAt: ports.now().toISOString(),
  };
  await putSweep(ports.records, body);
  return summary(body);
}

function summary(s: SweepRecordBody): ValidatedSweep {
  const key = sweepKeys.sweep(s.sweepId);
  return { sweepId: s.sweepId, sweepKey: `${key.pk}/${key.sk}`, checkpoints: s.checkpoints.length, suites: s.suites.length, modes: s.modes.length };
}
