/**
 * Experiment analyses over HTTP: run one now (admin; the analysis JSON, the notebook form), list the stored ones
 * (read), and read a metric's lift chart as a PNG (read). Thin adapters over `lib/experiments/analysis/`.
 *
 * An analysis needs the query engine over the raw archive (`ports.query`: Athena on AWS, DuckDB locally); a process
 * without one answers 503 `Flywheel.QueryNotConfigured`. The query view is always the caller's tenant's.
 *
 * @example
 * routes.push({ method: 'POST', path: '/v1/experiments/{id}/analyze', operationId: 'analyzeExperiment', …, make: makeAnalyzeExperimentHandler });
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { errorResult } from '../../api/json-response.ts';
import type { ApiHandler } from '../../api/route.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import { NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import type { QueryPort } from '../../ports/query.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { AnalysisErrorNames, QueryNotConfiguredError } from '../analysis/analysis-errors.ts';
import { analyzeExperiment } from '../analysis/analyze-experiment.ts';
import { ANALYSES_LIST_MAX, listAnalyses } from '../analysis/list-analyses.ts';
import { getExperiment } from '../experiment-store.ts';
import { archiveKeys } from '../record-keys.ts';
import { ExperimentId, MetricName } from '../schemas.ts';

export const AnalysisParams = z.strictObject({ id: ExperimentId });
export const LiftChartParams = z.strictObject({ id: ExperimentId, metric: MetricName });
export const AnalyzeQuery = z.strictObject({
  /** `false`: compute and answer, store nothing (no snapshot, no chart, no history entry). */
  store: z.enum(['true', 'false']).default('true'),
  /** The end of the exposure window (ISO 8601); default now. */
  to: z.iso.datetime({ offset: true }).optional(),
});
export const ListAnalysesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(ANALYSES_LIST_MAX).default(20),
});

/** The tenant the request's key belongs to (the dispatcher scoped the ports to it). */
function tenantOf(event: APIGatewayProxyEvent): string {
  return principalOfContext(event.requestContext?.authorizer)?.tenant ?? DEFAULT_TENANT;
}

/** The caller's tenant's view of the query engine, whatever view the process handed over. */
function queryFor(ports: Ports, event: APIGatewayProxyEvent): QueryPort {
  if (!ports.query) throw new QueryNotConfiguredError();
  const tenant = tenantOf(event);
  return ports.query.tenant === tenant ? ports.query : ports.query.forTenant(tenant);
}

/**
 * `POST /v1/experiments/{id}/analyze?store=&to=` (no body): runs the analysis now and answers it (200); 404 for an
 * unknown experiment, 400 for a draft, 503 without a query engine.
 */
export function makeAnalyzeExperimentHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(AnalysisParams, event.pathParameters ?? {}, 'path');
    const q = parseInput(AnalyzeQuery, event.queryStringParameters ?? {}, 'query');
    let query: QueryPort;
    try {
      query = queryFor(ports, event);
    } catch (err) {
      if (!(err instanceof QueryNotConfiguredError)) throw err;
      return { statusCode: 503, body: { error: AnalysisErrorNames.queryNotConfigured, message: err.message } };
    }
    const analysis = await analyzeExperiment({ records: ports.records, blobs: ports.blobs, query, now: ports.now }, id, {
      store: q.store === 'true',
      ...(q.to ? { to: new Date(q.to) } : {}),
    });
    return { statusCode: 200, body: analysis };
  });
}

/** `GET /v1/experiments/{id}/analyses?limit=`: stored analyses, newest first; 404 for an unknown experiment. */
export function makeListExperimentAnalysesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(AnalysisParams, event.pathParameters ?? {}, 'path');
    const q = parseInput(ListAnalysesQuery, event.queryStringParameters ?? {}, 'query');
    await getExperiment(ports.records, id);
    return { statusCode: 200, body: { items: await listAnalyses(ports.records, id, { limit: q.limit }) } };
  });
}

/**
 * `GET /v1/experiments/{id}/lift/{metric}`: the metric's lift over the stored analyses as a PNG (base64 for API
 * Gateway, which returns it as bytes to a client that accepts `image/png`); 404 for an unknown experiment or a
 * metric not analysed yet.
 */
export function makeGetExperimentLiftChartHandler(ports: Ports): ApiHandler {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    try {
      const { id, metric } = parseInput(LiftChartParams, event.pathParameters ?? {}, 'path');
      await getExperiment(ports.records, id);
      const png = await ports.blobs.get(archiveKeys.liftChart(tenantOf(event), id, metric));
      if (!png) throw new NotFoundError(`No lift chart of ${metric} for experiment ${id} yet: it is drawn by an analysis (POST /v1/experiments/${id}/analyze) of a metric the experiment reads`);
      return { statusCode: 200, headers: { 'content-type': 'image/png' }, body: Buffer.from(png).toString('base64'), isBase64Encoded: true };
    } catch (err) {
      return errorResult(err);
    }
  };
}
