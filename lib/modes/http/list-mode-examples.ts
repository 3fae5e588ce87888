import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { listModeExamples } from '../list-mode-examples.ts';

/** `GET /v1/failure-modes/{mode}/examples?model=&limit=&cursor=`: newest examples, evidence, cases made from the mode. */
export function makeListModeExamplesHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({
    statusCode: 200,
    body: await listModeExamples(ports, event.pathParameters?.mode ?? '', event.queryStringParameters ?? {}),
  }));
}
