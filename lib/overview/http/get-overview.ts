import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { getLoopOverview } from '../get-loop-overview.ts';
import { LoopOverviewQuery } from '../schemas.ts';

/**
 * `GET /v1/overview`: the loop's state in one answer (feedback, failure modes, checkpoints, sweeps, suites, training,
 * experiments, notices).
 *
 * @example
 * const handler = makeGetOverviewHandler(ports);
 */
export function makeGetOverviewHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    parseInput(LoopOverviewQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await getLoopOverview(ports) };
  });
}
