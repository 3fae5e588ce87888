/**
 * The experiments' ingest over HTTP: online metric events and exposures (`ingest` scope, answered 202 once durable on
 * the ingest queue, per item like feedback), and metric definitions (declare: `admin`; list: `read`).
 */
import { BODY_LIMITS, httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { ErrorNames } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { ingestExposures, ingestMetricEvents, type OnlineIngestOutcome } from '../ingest/ingest-online-events.ts';
import { listMetricDefinitions, putMetricDefinition } from '../metric-definitions.ts';

/** Body limit of `POST /v1/metric-definitions`: one definition. */
export const METRIC_DEFINITION_BODY_LIMIT = 64 * 1024;

function answer<K extends string>(outcome: OnlineIngestOutcome<K>, what: string) {
  if (outcome.status === 202) return { statusCode: 202, body: outcome.result };
  return {
    statusCode: 400,
    body: { error: ErrorNames.validation, message: `Every ${what} in the batch was rejected`, issues: outcome.issues, ...outcome.result },
  };
}

/**
 * `POST /v1/metrics`: one metric event, or `{ metrics: [...] }` (≤ 500).
 *
 * @example
 * const res = await makePostMetricsHandler(ports)(apiGatewayEvent); // { statusCode: 202, body: '{"ingestId":…,"results":[…]}' }
 */
export function makePostMetricsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => answer(await ingestMetricEvents(ports, event.jsonBody), 'metric event'), { jsonBodyMaxBytes: BODY_LIMITS.onlineEvents });
}

/**
 * `POST /v1/exposures`: one exposure, or `{ exposures: [...] }` (≤ 500).
 *
 * @example
 * const res = await makePostExposuresHandler(ports)(apiGatewayEvent); // { statusCode: 202, … }
 */
export function makePostExposuresHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => answer(await ingestExposures(ports, event.jsonBody), 'exposure'), { jsonBodyMaxBytes: BODY_LIMITS.onlineEvents });
}

/**
 * `POST /v1/metric-definitions`: 201 for a new name, 200 when re-declared, 409 for a built-in's name or a new kind.
 *
 * @example
 * const res = await makePutMetricDefinitionHandler(ports)(apiGatewayEvent); // { statusCode: 201, body: '{"name":"edits_kept",…}' }
 */
export function makePutMetricDefinitionHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { definition, created } = await putMetricDefinition(ports, event.jsonBody);
      return { statusCode: created ? 201 : 200, body: definition };
    },
    { jsonBodyMaxBytes: METRIC_DEFINITION_BODY_LIMIT },
  );
}

/**
 * `GET /v1/metric-definitions`: the built-ins, then the declared ones.
 *
 * @example
 * const res = await makeListMetricDefinitionsHandler(ports)(apiGatewayEvent); // { statusCode: 200, body: '{"items":[…]}' }
 */
export function makeListMetricDefinitionsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async () => ({ statusCode: 200, body: { items: await listMetricDefinitions(ports.records) } }));
}
