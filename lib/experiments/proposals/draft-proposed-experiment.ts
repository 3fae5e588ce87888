/**
 * A proposal becomes a draft: when a training run's checkpoint beat the incumbent in a sweep (`experiment.proposed`,
 * `lib/training/runs/events.ts`), a DRAFT experiment is created for a person to approve: control = the registry's
 * incumbent (else the first incumbent the proposal names), treatment = the new checkpoint, primary `thumbs_up_rate`,
 * guardrails `latency_ms_per_turn` and `tool_errors_per_turn` (5% regression tolerated), the stage's planned sample,
 * a ramp 5% → 25% → 50%. The experiment's id is the proposal's, so a redelivered event drafts nothing twice.
 */
import { z } from 'zod';
import type { Ports } from '../../ports/ports.ts';
import { getIncumbent } from '../../registry/incumbent.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { createExperiment } from '../create-experiment.ts';
import { notifierOf, type Notify } from '../decisions/experiment-notices.ts';
import type { ExperimentInput, ExperimentRecord } from '../schemas.ts';
import { sendOnce } from '../schedule/notice-once.ts';

/** The notice that a draft waits for approval (`experiment.drafted:<id>`). */
export const EXPERIMENT_DRAFTED = 'experiment.drafted';

/** The part of `experiment.proposed`'s detail a draft needs (`ExperimentProposedDetail`), checked: events are input. */
export const ProposedDetailSchema = z.looseObject({
  runId: z.string().min(1).max(256),
  proposalId: z.string().min(1).max(128),
  checkpointId: z.string().min(1).max(200),
  incumbents: z.array(z.string().min(1).max(200)).max(100),
  sweepId: z.string().min(1).max(256),
  evidence: z.array(z.record(z.string(), z.unknown())).max(50),
});

/** What a proposal's draft has; `plannedUnitsPerArm` comes from the stage (`experiments.proposalUnitsPerArm`). */
export const PROPOSAL_DEFAULTS = {
  primary: 'thumbs_up_rate',
  guardrails: [
    { metric: 'latency_ms_per_turn', maxRegression: 0.05 },
    { metric: 'tool_errors_per_turn', maxRegression: 0.05 },
  ],
  ramp: [
    { percent: 5, minHours: 24 },
    { percent: 25, minHours: 24 },
    { percent: 50, minHours: 24 },
  ],
} as const;

export type DraftOutcome =
  | { drafted: true; experiment: ExperimentRecord }
  | { drafted: false; experiment: ExperimentRecord; reason: 'already-drafted' }
  | { drafted: false; reason: 'no-control' | 'checkpoint-is-incumbent'; detail: string };

/**
 * Drafts the experiment a proposal asks for (idempotent by proposalId).
 *
 * @example
 * const outcome = await draftProposedExperiment(ports, event.detail, { plannedUnitsPerArm: 5000 });
 * // { drafted: true, experiment: { status: 'draft', definition: { id: 'exp-run-1-…', arms: [control, treatment], … } } }
 */
export async function draftProposedExperiment(
  ports: Pick<Ports, 'records' | 'events' | 'now'> & { notify?: Notify },
  detail: unknown,
  settings: { plannedUnitsPerArm: number },
): Promise<DraftOutcome> {
  const proposal = parseInput(ProposedDetailSchema, detail, 'experiment.proposed detail');
  const incumbent = await getIncumbent(ports.records);
  const control = incumbent?.checkpoint ?? proposal.incumbents[0];
  if (!control) return { drafted: false, reason: 'no-control', detail: `no registry incumbent and proposal ${proposal.proposalId} names none: nothing to compare ${proposal.checkpointId} against` };
  if (control === proposal.checkpointId) return { drafted: false, reason: 'checkpoint-is-incumbent', detail: `${proposal.checkpointId} already is the incumbent` };

  const id = proposal.proposalId;
  const input: ExperimentInput = {
    id,
    name: `${proposal.checkpointId} vs ${control}`.slice(0, 200),
    hypothesis: `Training run ${proposal.runId} produced ${proposal.checkpointId}, which beat the incumbent in sweep ${proposal.sweepId} on ${proposal.evidence.length} suite × mode cell(s); users should prefer it over ${control}.`,
    unitType: 'user',
    arms: [
      { id: 'control', checkpoint: control, control: true },
      { id: 'treatment', checkpoint: proposal.checkpointId },
    ],
    metrics: { primary: PROPOSAL_DEFAULTS.primary, secondary: [], guardrails: PROPOSAL_DEFAULTS.guardrails.map((g) => ({ ...g })) },
    plannedUnitsPerArm: settings.plannedUnitsPerArm,
    ramp: PROPOSAL_DEFAULTS.ramp.map((s) => ({ ...s })),
  };
  const origin = { kind: 'training-proposal' as const, runId: proposal.runId, proposalId: proposal.proposalId, sweepId: proposal.sweepId, checkpoint: proposal.checkpointId, evidence: proposal.evidence };
  const { record, created } = await createExperiment(ports, input, origin);
  // A redelivery after a crash between the draft and its notice still tells people once.
  await sendOnce(
    { records: ports.records, events: ports.events, notify: notifierOf(ports.notify, ports) },
    id,
    {
      id: `${EXPERIMENT_DRAFTED}:${id}`,
      kind: 'decision',
      severity: 'info',
      link: `/experiments/${encodeURIComponent(id)}`,
      source: { capability: 'experiments', runKind: 'experiment', runId: id },
      actions: [{ id: 'start', label: 'Start the A/B test', style: 'primary', operation: { kind: 'start-experiment', experimentId: id } }],
      title: `Experiment drafted: ${proposal.checkpointId} against ${control}`,
      text: `Proposed by training run ${proposal.runId} (sweep ${proposal.sweepId}). Primary thumbs_up_rate; guardrails latency and tool errors (5%); ramp 5% → 25% → 50%; ${record.plannedUnitsPerArm} units per arm planned.\nApprove with \`flywheel experiment start ${id}\`.`,
      fields: { experiment: id, control, treatment: proposal.checkpointId, run: proposal.runId },
    },
    undefined,
    ports.now(),
  );
  return created ? { drafted: true, experiment: record } : { drafted: false, experiment: record, reason: 'already-drafted' };
}
