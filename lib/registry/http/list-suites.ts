import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listSuites } from '../list-suites.ts';

/** `GET /v1/suites?status=`: every suite by id with its status, visibility, version, useful life. */
export function makeListSuitesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 200, body: await listSuites(ports, event.queryStringParameters ?? {}) }));
}
