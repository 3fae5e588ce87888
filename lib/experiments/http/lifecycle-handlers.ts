/**
 * Experiments over HTTP: create one (admin), list and read them (read), start and stop one or an arm (admin). Thin
 * adapters over `create-experiment.ts`, `start-experiment.ts`, `stop-experiment.ts`, `get-experiment.ts` and the store.
 *
 * @example
 * routes.push({ method: 'POST', path: '/v1/experiments', operationId: 'createExperiment', …, make: makeCreateExperimentHandler });
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { createExperiment } from '../create-experiment.ts';
import { EXPERIMENT_LIST_MAX, listExperiments } from '../experiment-store.ts';
import { getExperimentDetail } from '../get-experiment.ts';
import { EXPERIMENT_STATUSES, ExperimentId } from '../schemas.ts';
import { startExperiment } from '../start-experiment.ts';
import { stopExperiment } from '../stop-experiment.ts';

/** Bytes of a create request: 8 arms with 8 KiB of serving configuration each, and the rest. */
export const EXPERIMENT_BODY_LIMIT = 128 * 1024;
/** Bytes of a stop request (a reason of up to 4000 characters). */
export const STOP_BODY_LIMIT = 16 * 1024;

export const ExperimentParams = z.strictObject({ id: ExperimentId });
export const ListExperimentsQuery = z.strictObject({
  status: z.enum(EXPERIMENT_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(EXPERIMENT_LIST_MAX).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

/** Who asked: `key:<keyId>` of the API key, or `api` when the context carries none. */
export function actorOf(event: APIGatewayProxyEvent): string {
  const keyId = principalOfContext(event.requestContext?.authorizer)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `key:${keyId}` : 'api';
}

/** `POST /v1/experiments`: 201 with the draft when created, 200 when the same definition existed, 409 for another one. */
export function makeCreateExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { record, created } = await createExperiment(ports, event.jsonBody, { kind: 'person', by: actorOf(event) });
      return { statusCode: created ? 201 : 200, body: { experiment: record, created } };
    },
    { jsonBodyMaxBytes: EXPERIMENT_BODY_LIMIT },
  );
}

/** `GET /v1/experiments?status=&limit=&cursor=`: newest first (grouped by status without a filter). */
export function makeListExperimentsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const q = parseInput(ListExperimentsQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listExperiments(ports.records, { limit: q.limit, ...(q.status ? { status: q.status } : {}), ...(q.cursor ? { cursor: q.cursor } : {}) }) };
  });
}

/** `GET /v1/experiments/{id}`: the record, its changes (oldest first) and its newest analysis id; 404 if unknown. */
export function makeGetExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(ExperimentParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getExperimentDetail(ports.records, id) };
  });
}

/** `POST /v1/experiments/{id}/start` (no body): draft → running; 200 unchanged when running; 409 when stopped or decided. */
export function makeStartExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(ExperimentParams, event.pathParameters ?? {}, 'path');
    const { record, changed } = await startExperiment(ports, id, actorOf(event));
    return { statusCode: 200, body: { experiment: record, changed } };
  });
}

/** `POST /v1/experiments/{id}/stop` (`{ reason, arm? }`): the experiment, or one arm (never the control). */
export function makeStopExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { id } = parseInput(ExperimentParams, event.pathParameters ?? {}, 'path');
      const { record, changed } = await stopExperiment(ports, id, event.jsonBody, actorOf(event));
      return { statusCode: 200, body: { experiment: record, changed } };
    },
    { jsonBodyMaxBytes: STOP_BODY_LIMIT },
  );
}
