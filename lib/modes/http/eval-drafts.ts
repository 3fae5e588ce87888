import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { ValidationError } from '../../errors.ts';
import { repoIssue, taskSourcesFromEnv } from '../../registry/task-sources.ts';
import { approveEvalDraft, ApproveRequest } from '../evals/approve-eval-draft.ts';
import { draftEvalCase, listEvalDrafts } from '../evals/eval-drafts.ts';
import { draftApprovalView } from '../record-codecs.ts';
import { modeKeys } from '../record-keys.ts';
import { JUDGE_MODEL_ENV, ModelNotConfiguredError, modesModelsFromEnv } from '../modes-models.ts';

export const DRAFT_BODY_LIMIT = 16 * 1024;

/** `POST /v1/eval-drafts` `{ fromCluster } | { fromReport }`: the judge model drafts a case (503 when none is configured). */
export function makePostEvalDraftHandler(ports: Ports): HttpApiHandler {
  const { judge } = modesModelsFromEnv();
  return httpApi(
    async (event) => {
      if (!judge) throw new ModelNotConfiguredError('Drafting eval cases', JUDGE_MODEL_ENV);
      return { statusCode: 201, body: await draftEvalCase(ports, judge, event.jsonBody) };
    },
    { jsonBodyMaxBytes: DRAFT_BODY_LIMIT },
  );
}

/** `GET /v1/eval-drafts?status=pending|approved`. */
export function makeListEvalDraftsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listEvalDrafts(ports, event.queryStringParameters ?? {}) }));
}

/**
 * `POST /v1/eval-drafts/{id}/approve` `{ approver, suite?, repo? }`: the case joins the private suite. Its repository
 * (the body's, or the draft's, which comes from the signals' client-written `context.repo`) must be a configured
 * source (`lib/registry/task-sources.ts`): an allowed git remote or a blob under the suite's own prefix, never a path
 * of the server.
 */
export function makeApproveEvalDraftHandler(ports: Ports): HttpApiHandler {
  const sources = taskSourcesFromEnv();
  return httpApi(
    async (event) => {
      const id = event.pathParameters?.id ?? '';
      const body = ApproveRequest.safeParse(event.jsonBody ?? {});
      if (body.success) {
        const key = modeKeys.draft(id);
        const draft = draftApprovalView.decodeIfPresent(await ports.records.get(key.pk, key.sk));
        const repo = body.data.repo ?? draft?.repo;
        // A missing or already decided draft is the use case's answer (404, 409); a pending one's repository is checked.
        const issue = draft?.status === 'pending' && repo !== undefined ? repoIssue(repo, body.data.suite, sources) : undefined;
        if (issue) throw new ValidationError(`Invalid approval: ${issue.path} ${issue.message}`, [issue]);
      }
      return { statusCode: 200, body: await approveEvalDraft(ports, id, event.jsonBody) };
    },
    { jsonBodyMaxBytes: DRAFT_BODY_LIMIT },
  );
}
