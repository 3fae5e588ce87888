import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listCheckpoints } from '../list-checkpoints.ts';

/** `GET /v1/checkpoints?model=&limit=&cursor=`: newest first. */
export function makeListCheckpointsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listCheckpoints(ports, event.queryStringParameters ?? {}) }));
}
