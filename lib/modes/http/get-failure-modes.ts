import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { queryFailureModes } from '../query-failure-modes.ts';

/** `GET /v1/failure-modes?model=a[,b]&compare=&since=&until=`: counts, rates per thousand turns, trend; side by side. */
export function makeGetFailureModesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await queryFailureModes(ports, event.queryStringParameters ?? {}) }));
}
