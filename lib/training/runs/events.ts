/**
 * The domain events training runs publish (EventBridge detail-types on AWS, the event log locally), each with a stable
 * id so a step run twice publishes one event.
 *
 * - `experiment.proposed` (`experiment.proposed:<runId>`): a run's checkpoint beat the incumbent; the detail names the
 *   checkpoint, the incumbents and the evidence (the sweep's comparisons where it was better).
 * - `training.run.finished` (`training.run.finished:<runId>:<status>:<resumes>`): a run ended (succeeded, failed).
 * - `training.run.stalled` (`training.run.stalled:<runId>:<last heartbeat>`): no heartbeat for `stallMinutes`.
 *
 * @example
 * ports.events.subscribe(EXPERIMENT_PROPOSED, (e) => console.log(e.detail.checkpointId));
 */
export const EXPERIMENT_PROPOSED = 'experiment.proposed';
export const TRAINING_RUN_FINISHED = 'training.run.finished';
export const TRAINING_RUN_STALLED = 'training.run.stalled';

/** The detail of `experiment.proposed`. */
export interface ExperimentProposedDetail {
  runId: string;
  proposalId: string;
  checkpointId: string;
  /** The checkpoints it beat (the suites' incumbents). */
  incumbents: string[];
  sweepId: string;
  evidence: ProposalEvidence[];
}

/** One suite × mode where the checkpoint beat the incumbent, as the sweep compared them. */
export interface ProposalEvidence {
  suite: string;
  mode: string;
  incumbent: string | null;
  score: number | null;
  incumbentScore: number | null;
  difference: number | null;
  ci: { low: number; high: number } | null;
  n: number;
}
