/**
 * The decisions a notice asks for, taken: each `DecisionOperation` (`lib/people/notices/schemas.ts`) calls the use
 * case its own route calls, with the same checks, so a button in Slack or the console does exactly what the API would.
 * `by` is who decided (`slack:U0123ABCD`, `key:<keyId>`), recorded where the use case records an actor.
 *
 * - `approve-eval-draft`: the draft's repository must be a configured task source (as `POST /v1/eval-drafts/{id}/approve`
 *   checks), then the case joins the private suite;
 * - `start-experiment`: a draft starts running;
 * - `decide-experiment`: ship, roll back or extend (7 days) on the newest analysis. A button names no arm: ship takes
 *   the arm the newest analysis recommends shipping, else the one live treatment arm (several: refused, naming `arm`);
 * - `retire-suite`, `resume-training-run`, `stop-training-run`.
 *
 * @example
 * const { outcome } = await performDecision(ports, { kind: 'decide-experiment', experimentId: 'exp-7', decision: 'ship' }, 'slack:U0123ABCD');
 * // outcome: 'Shipped treatment of exp-7: ckpt-b is the incumbent'
 */
import { ValidationError } from '../../errors.ts';
import { listAnalyses } from '../../experiments/analysis/list-analyses.ts';
import { decideExperiment } from '../../experiments/decisions/decide-experiment.ts';
import { getExperiment } from '../../experiments/experiment-store.ts';
import { startExperiment } from '../../experiments/start-experiment.ts';
import { approveEvalDraft, DEFAULT_PRIVATE_SUITE } from '../../modes/evals/approve-eval-draft.ts';
import { draftApprovalView } from '../../modes/record-codecs.ts';
import { modeKeys } from '../../modes/record-keys.ts';
import type { Ports } from '../../ports/ports.ts';
import { retireSuite } from '../../registry/retire-suite.ts';
import { repoIssue, taskSourcesFromEnv } from '../../registry/task-sources.ts';
import { resumeTrainingRun } from '../../training/runs/resume-training-run.ts';
import { stopTrainingRun } from '../../training/runs/stop-training-run.ts';
import type { DecisionOperation } from '../notices/schemas.ts';

/** Days an `extend` button adds to an experiment's maximum duration. */
export const EXTEND_DAYS = 7;

/**
 * @example
 * await performDecision(ports, { kind: 'retire-suite', suiteId: 'forge-py' }, 'slack:U0123ABCD'); // { outcome: 'Retired suite forge-py' }
 */
export async function performDecision(ports: Ports, operation: DecisionOperation, by: string): Promise<{ outcome: string }> {
  switch (operation.kind) {
    case 'approve-eval-draft': {
      const key = modeKeys.draft(operation.draftId);
      const draft = draftApprovalView.decodeIfPresent(await ports.records.get(key.pk, key.sk));
      // A missing or decided draft is the use case's answer (404, 409); a pending one's repository is checked first.
      const issue = draft?.status === 'pending' && draft.repo !== undefined ? repoIssue(draft.repo, DEFAULT_PRIVATE_SUITE, taskSourcesFromEnv()) : undefined;
      if (issue) throw new ValidationError(`Invalid approval: ${issue.path} ${issue.message}`, [issue]);
      const { task, suiteVersion } = await approveEvalDraft(ports, operation.draftId, { approver: by });
      return { outcome: `Approved eval draft ${operation.draftId}: task ${task.id} in ${DEFAULT_PRIVATE_SUITE} v${suiteVersion}` };
    }
    case 'start-experiment': {
      const { changed } = await startExperiment(ports, operation.experimentId, by);
      return { outcome: changed ? `Started experiment ${operation.experimentId}` : `Experiment ${operation.experimentId} was running already` };
    }
    case 'decide-experiment': {
      const id = operation.experimentId;
      const reason = `Answered in a notice by ${by}`;
      if (operation.decision === 'extend') {
        const { experiment } = await decideExperiment(ports, id, { kind: 'extend', extendDays: EXTEND_DAYS, reason }, by);
        return { outcome: `Extended ${id} by ${EXTEND_DAYS} days (maximum ${experiment.definition.maxDurationDays ?? '?'} days)` };
      }
      if (operation.decision === 'rollback') {
        const { changed } = await decideExperiment(ports, id, { kind: 'rollback', reason }, by);
        return { outcome: changed ? `Rolled back ${id}: the control stays` : `${id} was rolled back already` };
      }
      const arm = await armToShip(ports, id);
      const { decision, changed } = await decideExperiment(ports, id, { kind: 'ship', arm, reason }, by);
      const promoted = decision.promoted ? `: ${decision.promoted} is the incumbent` : '';
      return { outcome: changed ? `Shipped ${arm} of ${id}${promoted}` : `${id} was shipped already${promoted}` };
    }
    case 'retire-suite': {
      const { changed } = await retireSuite(ports, operation.suiteId, { reason: `Retired from a notice by ${by}`, by });
      return { outcome: changed ? `Retired suite ${operation.suiteId}` : `Suite ${operation.suiteId} was retired already` };
    }
    case 'resume-training-run': {
      const run = await resumeTrainingRun(ports, operation.runId);
      return { outcome: `Resumed training run ${run.runId} (resume ${run.resumes ?? 1})` };
    }
    case 'stop-training-run': {
      const run = await stopTrainingRun(ports, operation.runId, by);
      return { outcome: `Training run ${run.runId} is ${run.status}` };
    }
  }
}

/** The arm a ship button ships: the newest analysis's recommendation, else the single live treatment arm. */
async function armToShip(ports: Pick<Ports, 'records'>, experimentId: string): Promise<string> {
  const experiment = await getExperiment(ports.records, experimentId);
  // A decided experiment: the use case answers a retry with the arm it shipped.
  if (experiment.decision?.kind === 'ship' && experiment.decision.arm) return experiment.decision.arm;
  const [analysis] = await listAnalyses(ports.records, experimentId, { limit: 1 });
  if (analysis?.recommendation.action === 'ship' && analysis.recommendation.arm) return analysis.recommendation.arm;
  const stopped = new Set(experiment.stoppedArms.map((s) => s.arm));
  const live = experiment.definition.arms.filter((a) => !a.control && !stopped.has(a.id));
  if (live.length === 1) return live[0]!.id;
  throw new ValidationError(`experiment ${experimentId} has ${live.length} live treatment arms and no analysis recommending one: ship it with POST /v1/experiments/${experimentId}/decide naming the arm`, [
    { path: 'arm', message: 'name the arm to ship' },
  ]);
}
