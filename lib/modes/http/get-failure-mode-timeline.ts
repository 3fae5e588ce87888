import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { getFailureModeTimeline } from '../get-failure-mode-timeline.ts';

/**
 * `GET /v1/failure-modes/timeline?from&to&checkpoint&bucket`: per checkpoint and day (or week), each mode's count and
 * rate over the classified signals.
 *
 * @example
 * const handler = makeGetFailureModeTimelineHandler(ports); // GET /v1/failure-modes/timeline?bucket=week
 */
export function makeGetFailureModeTimelineHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await getFailureModeTimeline(ports, event.queryStringParameters ?? {}) }));
}
