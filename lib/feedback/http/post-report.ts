import { BODY_LIMITS, httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { submitReport } from '../submit-report.ts';

/** `POST /v1/reports`: one internal or automated report; 202 once durable. */
export function makePostReportHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 202, body: await submitReport(ports, event.jsonBody) }), {
    jsonBodyMaxBytes: BODY_LIMITS.reports,
  });
}
