/**
 * Training runs over HTTP: start one (admin), list and read them (read), read a run's curves as JSON or as a PNG
 * (read), stop and resume one (admin). The use cases are `lib/training/runs/`; the run itself is one execution of the
 * `train` state machine (build dataset → train → register → sweep → compare → propose).
 *
 * Runs execute over the root ports (the workflow carries no tenant yet, like sweeps), so only keys of the default
 * tenant start, stop or resume them; another tenant's key gets 403 (its view of the ports has no workflows).
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { errorResult } from '../../api/json-response.ts';
import type { ApiHandler } from '../../api/route.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import { ForbiddenError } from '../../auth/forbidden-error.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { renderTrainingCurves } from '../render-training-curves.ts';
import { getTrainingRun, listTrainingRuns, readTrainingCurves, resumeTrainingRun, startTrainingRun, stopTrainingRun } from '../runs/training-runs.ts';
import { TRAINING_RUN_STATUSES } from '../schemas.ts';

export const TRAINING_RUN_BODY_LIMIT = 64 * 1024;

export const TrainingRunParams = z.strictObject({ runId: z.string().min(1).max(200) });
export const ListTrainingRunsQuery = z.strictObject({
  status: z.enum(TRAINING_RUN_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export const TrainingCurvesQuery = z.strictObject({
  /** `json` (the metrics lines) or `png` (one panel per metric). */
  format: z.enum(['json', 'png']).default('json'),
});

/** Who asked: `key:<keyId>` of the API key, or `api` when the context carries none. */
function actorOf(event: APIGatewayProxyEvent): string {
  const keyId = principalOfContext(event.requestContext?.authorizer)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `key:${keyId}` : 'api';
}

function requireDefaultTenant(event: APIGatewayProxyEvent, what: string): void {
  const tenant = principalOfContext(event.requestContext?.authorizer)?.tenant;
  if (tenant !== undefined && tenant !== DEFAULT_TENANT) {
    throw new ForbiddenError(`Forbidden: training runs ${what} for the ${DEFAULT_TENANT} tenant only; tenant ${tenant} cannot yet`);
  }
}

/** `POST /v1/training-runs`: 201 with the run when created, 200 when a run of this id already existed (idempotent). */
export function makePostTrainingRunHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      requireDefaultTenant(event, 'start');
      const { run, created } = await startTrainingRun(ports, event.jsonBody, actorOf(event));
      return { statusCode: created ? 201 : 200, body: { run, created } };
    },
    { jsonBodyMaxBytes: TRAINING_RUN_BODY_LIMIT },
  );
}

/** `GET /v1/training-runs?status=&limit=&cursor=`: newest first. */
export function makeListTrainingRunsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const q = parseInput(ListTrainingRunsQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listTrainingRuns(ports, { limit: q.limit, ...(q.status ? { status: q.status } : {}), ...(q.cursor ? { cursor: q.cursor } : {}) }) };
  });
}

/** `GET /v1/training-runs/{runId}`: the run (states, step, heartbeat, checkpoint, comparison); 404 if unknown. */
export function makeGetTrainingRunHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { runId } = parseInput(TrainingRunParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getTrainingRun(ports, runId) };
  });
}

/**
 * `GET /v1/training-runs/{runId}/curves?format=json|png`: the run's metrics lines, or their PNG (one panel per metric,
 * base64 for API Gateway, which returns it as bytes to a client that accepts `image/png`). 404 if the run is unknown.
 * A long run answers at most `CURVE_MAX_POINTS` lines, evenly spaced with its first and last step (`readTrainingCurves`).
 */
export function makeGetTrainingCurvesHandler(ports: Ports): ApiHandler {
  const asJson = httpApi(async (event) => {
    const { runId } = parseInput(TrainingRunParams, event.pathParameters ?? {}, 'path');
    parseInput(TrainingCurvesQuery, event.queryStringParameters ?? {}, 'query');
    await getTrainingRun(ports, runId);
    return { statusCode: 200, body: { runId, lines: await readTrainingCurves({ blobs: ports.blobs }, runId) } };
  });
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    if (event.queryStringParameters?.format !== 'png') return asJson(event);
    try {
      const { runId } = parseInput(TrainingRunParams, event.pathParameters ?? {}, 'path');
      parseInput(TrainingCurvesQuery, event.queryStringParameters, 'query');
      await getTrainingRun(ports, runId);
      const png = await renderTrainingCurves(runId, await readTrainingCurves({ blobs: ports.blobs }, runId));
      return { statusCode: 200, headers: { 'content-type': 'image/png' }, body: png.toString('base64'), isBase64Encoded: true };
    } catch (err) {
      return errorResult(err);
    }
  };
}

/** `POST /v1/training-runs/{runId}/stop` (no body): stops the execution and its trainer job; the run ends `stopped`. */
export function makeStopTrainingRunHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    requireDefaultTenant(event, 'stop');
    const { runId } = parseInput(TrainingRunParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await stopTrainingRun(ports, runId, actorOf(event)) };
  });
}

/** `POST /v1/training-runs/{runId}/resume` (no body): starts a stopped or failed run again; the trainer resumes from its last state. */
export function makeResumeTrainingRunHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    requireDefaultTenant(event, 'resume');
    const { runId } = parseInput(TrainingRunParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await resumeTrainingRun(ports, runId) };
  });
}
