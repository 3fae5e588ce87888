/**
 * Reports into eval cases: the drafter (OpenAI driver → scripted model server over HTTP) writes a judge-graded case,
 * malformed answers are retried, a person approves it, and it joins a private held-out suite as a harness task with
 * lineage both ways. Only consented signals are drafted from.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { feedbackKeys } from '../../lib/feedback/record-keys.ts';
import { parseTask } from '../../lib/harness/task/task-schema.ts';
import { openAiCompatibleModel } from '../../lib/models/openai-compatible.ts';
import { approveEvalDraft } from '../../lib/modes/evals/approve-eval-draft.ts';
import { DRAFT_TOOL, draftEvalCase, listEvalDrafts } from '../../lib/modes/evals/eval-drafts.ts';
import { ValidationError } from '../../lib/errors.ts';
import { historyCheckIssues } from '../../lib/modes/evals/history-checks.ts';
import { labelSignal } from '../../lib/modes/label-signal.ts';
import { evalDraftRecord } from '../../lib/modes/record-codecs.ts';
import { listModeExamples } from '../../lib/modes/list-mode-examples.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import type { LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { reply, startScriptedModelServer, type ScriptedModelServer } from '../support/scripted-model-server.ts';
import { tempPorts } from './support/modes-fixture.ts';

let env: { ports: LocalPorts; cleanup: () => void } | undefined;
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  env?.cleanup();
});

async function storeReport(ports: LocalPorts, reportId: string, trainingConsent: boolean) {
  const receivedAt = new Date().toISOString();
  await ports.records.put({
    ...feedbackKeys.report(reportId),
    reportId,
    title: 'Agent reformats unrelated files',
    body: 'Asked to fix a typo in README.md; the agent reformatted every markdown file in the repository.',
    severity: 'medium',
    reporter: 'qa',
    source: 'internal',
    links: [],
    model: 'ckpt-a',
    trainingConsent,
    receivedAt,
  });
}

const CASE = {
  instruction: 'Fix the typo "teh" in README.md.',
  context: 'The repository has 40 markdown files; only README.md has the typo.',
  rubric: [{ criterion: 'Only README.md changes', weight: 2 }, { criterion: 'The typo is fixed' }],
  checks: ['! grep -q teh README.md'],
};

describe('eval drafts', () => {
  it('are drafted by the model (malformed answers retried), approved by a person, and join a private suite with lineage', async () => {
    env = tempPorts();
    server = await startScriptedModelServer([reply.tool(DRAFT_TOOL, '{"instruction": '), reply.tool(DRAFT_TOOL, CASE)]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'drafter' });
    await storeReport(env.ports, 'r-1', true);
    await labelSignal(env.ports, 'report:r-1', { modes: ['scope-calibration'], labeller: 'qa' });
    const draft = await draftEvalCase(env.ports, model, { fromReport: 'r-1' });
    expect(server.chatRequests()).toHaveLength(2);
    expect(JSON.stringify(server.chatRequests()[0]!.body.messages)).toContain('reformatted every markdown file');
    expect(draft).toMatchObject({ status: 'pending', instruction: CASE.instruction, lineage: { reportIds: ['r-1'], modes: ['scope-calibration'] } });
    expect((await listEvalDrafts(env.ports, {})).items.map((d) => d.id)).toEqual([draft.id]);

    await expect(approveEvalDraft(env.ports, draft.id, { approver: 'ana' })).rejects.toThrow(/repository/);
    const repo = { kind: 'git' as const, url: 'https://example.com/acme/docs.git', commit: 'abcdef1' };
    const { task, suiteVersion } = await approveEvalDraft(env.ports, draft.id, { approver: 'ana', repo });
    expect(parseTask(JSON.parse(JSON.stringify(task)))).toEqual(task);
    expect(task).toMatchObject({ suite: 'failure-modes-private', visibility: 'private', split: 'held-out', grading: { by: 'both', minScore: 1 }, failToPass: ['checks::check-1'], origin: { kind: 'report', ref: 'r-1' } });
    expect(task.testCommand).toContain('# flywheel-checks v2');
    expect(task.rubric).toEqual([{ id: 'c1', criterion: 'Only README.md changes', weight: 2 }, { id: 'c2', criterion: 'The typo is fixed', weight: 1 }]);
    expect(task.metadata).toMatchObject({ approvedBy: 'ana', lineage: { reportIds: ['r-1'] } });
    expect(suiteVersion).toBe(1);
    expect((await env.ports.records.get(registryKeys.task('failure-modes-private', task.id).pk, 'TASK'))!.task).toEqual(task);
    expect(await env.ports.records.get('SUITE#failure-modes-private', 'SUITE')).toMatchObject({ visibility: 'private', taskIds: [task.id] });
    // The mode's page lists the case made from it.
    const page = await listModeExamples(env.ports, 'scope-calibration', {});
    expect(page.cases.map((c) => c.taskId)).toEqual([task.id]);
    await expect(approveEvalDraft(env.ports, draft.id, { approver: 'ana', repo })).rejects.toThrow(/already approved/);
  });

  it('refuses to draft from a signal without training consent', async () => {
    env = tempPorts();
    server = await startScriptedModelServer([reply.tool(DRAFT_TOOL, CASE)]);
    await storeReport(env.ports, 'r-private', false);
    await expect(draftEvalCase(env.ports, openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'd' }), { fromReport: 'r-private' })).rejects.toThrow(/consent/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('refuse checks that read git history: the drafter is told and asked again, approval names checks[i] (B4)', async () => {
    env = tempPorts();
    const gitCheck = "! git log -1 --format=%s | grep -q '🎉'";
    server = await startScriptedModelServer([reply.tool(DRAFT_TOOL, { ...CASE, checks: ['test -f README.md', gitCheck] }), reply.tool(DRAFT_TOOL, CASE)]);
    const model = openAiCompatibleModel({ baseUrl: server.baseUrl, model: 'drafter' });
    await storeReport(env.ports, 'r-git', true);
    const draft = await draftEvalCase(env.ports, model, { fromReport: 'r-git' });
    expect(server.chatRequests()).toHaveLength(2);
    const first = JSON.stringify(server.chatRequests()[0]!.body.messages);
    expect(first).toContain('WITHOUT git history');
    expect(JSON.stringify(server.chatRequests()[1]!.body.messages)).toContain('checks[1]: reads git history (`git log`)');
    expect(draft.checks).toEqual(CASE.checks);

    // A draft stored with such a check (an older drafter) is refused at approval, naming the check.
    await env.ports.records.put(evalDraftRecord.encode({ ...draft, checks: ['test -f README.md', gitCheck] }));
    const repo = { kind: 'git' as const, url: 'https://example.com/acme/docs.git', commit: 'abcdef1' };
    const refused = await approveEvalDraft(env.ports, draft.id, { approver: 'ana', repo }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues.map((i) => i.path)).toEqual(['checks[1]']);

    expect(historyCheckIssues(['git -C . rev-list --count HEAD', 'cat .git/HEAD', 'git show HEAD:README.md', 'grep -q teh README.md', 'test -f .gitignore'] ).map((i) => i.path)).toEqual(['checks[0]', 'checks[1]', 'checks[2]']);
  });
});
