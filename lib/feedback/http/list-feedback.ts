import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listFeedback } from '../list-feedback.ts';

/** `GET /v1/feedback?model=&rating=&source=&since=&until=&cursor=&limit=`: newest first, with an opaque cursor. */
export function makeListFeedbackHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listFeedback(ports, event.queryStringParameters ?? {}) }));
}
