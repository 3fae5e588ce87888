/**
 * The human approve step of an eval draft: the draft becomes a harness task of a private held-out suite (a new suite
 * version in the registry), with lineage to the feedback events, reports and clusters it came from.
 *
 * The task is graded by a rubric judge on the draft's rubric (criteria ids `c1`…`cn`, every criterion must pass:
 * `grading: { by: 'judge', minScore: 1 }`), with no test command. When the draft has shell checks, they are graded
 * too (`by: 'both'`): the verdict reads reports, never exit codes, so the checks run as a generated test command that
 * writes one JUnit testcase per check (`checksTestCommand`, ids `checks::check-<n>` as failToPass) — each check must
 * exit 0 — and the judge sees their outcomes. The draft's `behaviour` (user turns, services), when it has one, is
 * copied onto the task.
 */
import { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { checksTestCommand } from '../../harness/grading/checks-command.ts';
import { parseTask, RepoSourceSchema, type Task } from '../../harness/task/task-schema.ts';
import type { Ports } from '../../ports/ports.ts';
import { findSuite } from '../../registry/get-suite.ts';
import { taskRecord } from '../../registry/record-codecs.ts';
import { registerSuite } from '../../registry/register-suite.ts';
import { evalDraftRecord, modeCaseRecord } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { historyCheckIssues } from './history-checks.ts';

export const DEFAULT_PRIVATE_SUITE = 'failure-modes-private';

export const ApproveRequest = z.strictObject({
  approver: z.string().min(1).max(256),
  suite: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/).default(DEFAULT_PRIVATE_SUITE),
  /** Where the agent works; default the source signals' `context.repo` + `context.commit` (a git repository). */
  repo: RepoSourceSchema.optional(),
});

/**
 * The human approve step: the draft becomes a harness task of a private held-out suite.
 *
 * @example
 * const { task } = await approveEvalDraft(ports, 'draft-1a2b…', { approver: 'ana', repo: { kind: 'git', url, commit } });
 */
export async function approveEvalDraft(ports: Pick<Ports, 'records' | 'now'>, id: string, input: unknown): Promise<{ task: Task; suiteVersion: number }> {
  const r = ApproveRequest.safeParse(input ?? {});
  if (!r.success) throw new ValidationError('Invalid approval', toFieldIssues(r.error.issues));
  const key = modeKeys.draft(id);
  const item = evalDraftRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
  if (!item) throw new NotFoundError(`No eval draft ${id}`);
  if (item.status !== 'pending') throw new ConflictError(`Eval draft ${id} is already ${item.status}`);
  const repo = r.data.repo ?? item.repo;
  if (!repo) throw new ValidationError('The draft names no repository: give one in `repo`', [{ path: 'repo', message: 'required' }]);
  const approvedAt = ports.now().toISOString();
  const { lineage, checks } = item;
  const history = historyCheckIssues(checks);
  if (history.length > 0) throw new ValidationError(`Draft ${id} has checks that read git history; edit them out (or into the rubric) and draft again`, history);
  const taskId = `fm-${id.slice('draft-'.length)}`;
  const graded = checks.length > 0 ? { ...checksTestCommand(checks), grading: { by: 'both' as const, minScore: 1 } } : { failToPass: [], grading: { by: 'judge' as const, minScore: 1 } };
  const behaviour = 'behaviour' in item ? (item as { behaviour?: unknown }).behaviour : undefined;
  const task = parseTask(
    {
      schemaVersion: 1,
      id: taskId,
      suite: r.data.suite,
      split: 'held-out',
      visibility: 'private',
      repo,
      instruction: item.instruction,
      ...graded,
      rubric: item.rubric.map((c, i) => ({ id: `c${i + 1}`, criterion: c.criterion, weight: c.weight })),
      ...(behaviour !== undefined ? { behaviour } : {}),
      origin: { kind: lineage.reportIds.length > 0 ? 'report' : 'cluster', ref: lineage.reportIds[0] ?? lineage.clusterIds[0] },
      metadata: { context: item.context, checks, lineage, draftId: id, approvedBy: r.data.approver, approvedAt, drafter: item.drafter },
    },
    `eval draft ${id}`,
  );
  await ports.records.put(taskRecord.encode({ suite: r.data.suite, taskId, kind: 'task', task }));
  const suite = await findSuite(ports.records, r.data.suite);
  const taskIds = [...new Set([...(suite?.taskIds ?? []), taskId])];
  const version = (suite?.version ?? 0) + 1;
  await registerSuite(ports, {
    id: r.data.suite,
    version,
    visibility: 'private',
    owner: suite?.owner ?? 'failure-modes',
    description: 'Held-out cases drafted from failure-mode reports and clusters, approved by people.',
    tasks: { kind: 'records' },
    taskIds,
  });
  for (const mode of lineage.modes) {
    await ports.records.put(modeCaseRecord.encode({ mode, taskId, suite: r.data.suite, draftId: id, approvedBy: r.data.approver, approvedAt, lineage }));
  }
  await ports.records.put(
    evalDraftRecord.encode({ ...item, status: 'approved', approvedBy: r.data.approver, approvedAt, taskId, suite: r.data.suite, suiteVersion: version }),
  );
  return { task, suiteVersion: version };
}
