/**
 * Decision records over HTTP: list (newest first, by run, attempt, status, hint class), show one, and extract from an
 * eval run's attempts or from feedback events. Reads need the `read` scope, extraction `admin` (the route table says
 * so). Extraction runs in the request: a run of more than `MAX_REQUEST_ATTEMPTS` attempts must be named in slices
 * (`attemptIds`), and a trajectory over 32 MiB is skipped (checked after the read: the blobs port gives no size first).
 */
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { JsonApiEvent } from '../../api/middlewares/http-event.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { DECISION_EXTRACTOR, extractDecisions, ExtractDecisionsInput } from '../decisions/extract-decisions.ts';
import { getDecision } from '../decisions/get-decision.ts';
import { listDecisions } from '../decisions/list-decisions.ts';

/** Attempts one request extracts from without `attemptIds`: a larger run is refused (400 naming `attemptIds`). */
export const MAX_REQUEST_ATTEMPTS = 200;

/** Body limit of `POST /v1/decisions/extract`: ids and a model spec. */
export const EXTRACT_DECISIONS_BODY_LIMIT = 256 * 1024;

export const DecisionParams = z.strictObject({ decisionId: z.string().regex(/^dec-[0-9a-f]{20}$/, 'dec- and 20 hex digits') });

/** Who extracts: the API key's id the authorizer put on the request. */
function callerOf(event: JsonApiEvent): string {
  const keyId = (event.requestContext?.authorizer as { keyId?: unknown } | null | undefined)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `${DECISION_EXTRACTOR} for key:${keyId}` : DECISION_EXTRACTOR;
}

/** `GET /v1/decisions?run=&attempt=&status=&hintClass=&limit=&cursor=`. */
export function makeListDecisionsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listDecisions(ports, event.queryStringParameters ?? {}) }));
}

/** `GET /v1/decisions/{decisionId}`: the record; 404 if unknown. */
export function makeGetDecisionHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { decisionId } = parseInput(DecisionParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getDecision(ports, decisionId) };
  });
}

/** `POST /v1/decisions/extract` `{ runId?, attemptIds?, feedbackEventIds?, sources?, locatorModel? }`: counts and what was skipped. */
export function makeExtractDecisionsHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const input = parseInput(ExtractDecisionsInput, event.jsonBody, 'extraction');
      return { statusCode: 200, body: await extractDecisions(ports, input, { createdBy: callerOf(event), maxAttemptsWithoutIds: MAX_REQUEST_ATTEMPTS }) };
    },
    { jsonBodyMaxBytes: EXTRACT_DECISIONS_BODY_LIMIT },
  );
}
