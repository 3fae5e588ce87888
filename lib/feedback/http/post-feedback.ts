import { BODY_LIMITS, httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { ErrorNames } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { ingestFeedback } from '../ingest-feedback.ts';

/**
 * `POST /v1/feedback`: one event, or `{ events: [...] }` (≤ 500). 202 with a per-item answer when anything was
 * accepted; 400 listing every offending field when nothing was.
 *
 * @example
 * const handler = makePostFeedbackHandler(ports);
 * const res = await handler(apiGatewayEvent, lambdaContext); // { statusCode: 202, body: '{"ingestId":…}' }
 */
export function makePostFeedbackHandler(ports: Ports): HttpApiHandler {
  return httpApi(
    async (event) => {
      const { status, result, issues } = await ingestFeedback(ports, event.jsonBody);
      if (status === 202) return { statusCode: 202, body: result };
      return {
        statusCode: 400,
        body: { error: ErrorNames.validation, message: 'Every event in the batch was rejected', issues, ...result },
      };
    },
    { jsonBodyMaxBytes: BODY_LIMITS.feedback },
  );
}
