import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { suiteView } from '../record-views.ts';
import { retireSuite } from '../retire-suite.ts';
import { SuiteIdParams } from '../schemas.ts';

/** Body limit of `POST /v1/suites/{id}/retire`: a reason (≤ 2,000 characters) and a name. */
export const RETIRE_BODY_LIMIT = 16 * 1024;

/**
 * `POST /v1/suites/{id}/retire` with `{ reason, by? }`: marks the suite retired (200; `changed: false` when it already
 * was, the first retirement kept), 400 without a reason, 404 for an unknown suite. Publishes `suite.retired`.
 */
export function makeRetireSuiteHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { id } = parseInput(SuiteIdParams, event.pathParameters ?? {}, 'path');
      const { suite, changed } = await retireSuite(ports, id, event.jsonBody);
      return { statusCode: 200, body: { suite: suiteView(suite), changed } };
    },
    { jsonBodyMaxBytes: RETIRE_BODY_LIMIT },
  );
}
