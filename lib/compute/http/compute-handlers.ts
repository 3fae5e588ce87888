/**
 * Compute accounting over HTTP: jobs (read), usage per category, run or day with the budgets' spend (read), budgets
 * (list: read; set: admin, default tenant only: compute is the account's, not a tenant's). Thin adapters over
 * `lib/compute/usage/` and `lib/compute/budgets/`.
 *
 * @example
 * routes.push({ method: 'GET', path: '/v1/compute/usage', operationId: 'getComputeUsage', …, make: makeGetComputeUsageHandler });
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { principalOfContext } from '../../auth/authorize-request.ts';
import { ForbiddenError } from '../../auth/forbidden-error.ts';
import { DEFAULT_TENANT } from '../../auth/scopes.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { listComputeBudgets } from '../budgets/list-compute-budgets.ts';
import { putComputeBudget } from '../budgets/put-compute-budget.ts';
import { GetComputeUsageQuery, ListJobsQuery } from '../schemas.ts';
import { getComputeUsage } from '../usage/get-compute-usage.ts';
import { listJobs } from '../usage/list-jobs.ts';

/** Bytes of a budget request. */
export const BUDGET_BODY_LIMIT = 4 * 1024;

/** Who asked: `key:<keyId>` of the API key, or `api` when the context carries none. */
function actorOf(event: APIGatewayProxyEvent): string {
  const keyId = principalOfContext(event.requestContext?.authorizer)?.keyId;
  return typeof keyId === 'string' && keyId !== '' ? `key:${keyId}` : 'api';
}

/** `GET /v1/jobs?status=&category=&limit=&cursor=`: jobs newest first. */
export function makeListJobsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const q = parseInput(ListJobsQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listJobs(ports.records, q) };
  });
}

/** `GET /v1/compute/usage?from=&to=&groupBy=category|run|day`: rows and the budgets' spend. */
export function makeGetComputeUsageHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const q = parseInput(GetComputeUsageQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await getComputeUsage(ports, q) };
  });
}

/** `GET /v1/compute/budgets`: every budget with its spend in the current period. */
export function makeListComputeBudgetsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async () => ({ statusCode: 200, body: { budgets: await listComputeBudgets(ports) } }));
}

/** `POST /v1/compute/budgets` (`{ category | runId, limitUsd }`): sets (or replaces) a budget. */
export function makePutComputeBudgetHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const tenant = principalOfContext(event.requestContext?.authorizer)?.tenant;
      if (tenant !== undefined && tenant !== DEFAULT_TENANT) throw new ForbiddenError(`Forbidden: compute budgets are set by the ${DEFAULT_TENANT} tenant only; tenant ${tenant} cannot`);
      const budget = await putComputeBudget(ports, event.jsonBody, actorOf(event));
      return { statusCode: 200, body: { budget } };
    },
    { jsonBodyMaxBytes: BUDGET_BODY_LIMIT },
  );
}
