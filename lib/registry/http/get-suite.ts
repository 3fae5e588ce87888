import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { getSuiteDetail } from '../get-suite-detail.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { SuiteIdParams } from '../schemas.ts';

/** `GET /v1/suites/{id}?points=`: the suite with its status, useful life and best strict score over time; 404 if unknown. */
export function makeGetSuiteHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(SuiteIdParams, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await getSuiteDetail(ports, id, event.queryStringParameters ?? {}) };
  });
}
