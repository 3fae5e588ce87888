import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { getSweepReport } from '../get-sweep-report.ts';
import { SweepIdParams } from '../schemas.ts';

/** `GET /v1/sweeps/{id}`: the sweep's report (results with CIs, failed shards, comparisons, saturation); 404 if unknown. */
export function makeGetSweepHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(SweepIdParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getSweepReport(ports, id) };
  });
}
