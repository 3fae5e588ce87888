import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { labelSignal } from '../label-signal.ts';
import { listReviewQueue } from '../list-review-queue.ts';

/** Body limit of a human label. */
export const LABEL_BODY_LIMIT = 16 * 1024;

/** `GET /v1/review-queue?status=pending|done&limit=&cursor=`. */
export function makeListReviewQueueHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listReviewQueue(ports, event.queryStringParameters ?? {}) }));
}

/** `POST /v1/review-queue/{id}/label` `{ modes, severity?, labeller, note? }`: a human label (any stored signal). */
export function makePostReviewLabelHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await labelSignal(ports, event.pathParameters?.id ?? '', event.jsonBody) }), {
    jsonBodyMaxBytes: LABEL_BODY_LIMIT,
  });
}
