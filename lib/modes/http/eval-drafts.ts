import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { approveEvalDraft, draftEvalCase, listEvalDrafts } from '../evals/eval-drafts.ts';
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

/** `POST /v1/eval-drafts/{id}/approve` `{ approver, suite?, repo? }`: the case joins the private suite. */
export function makeApproveEvalDraftHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await approveEvalDraft(ports, event.pathParameters?.id ?? '', event.jsonBody) }), {
    jsonBodyMaxBytes: DRAFT_BODY_LIMIT,
  });
}
