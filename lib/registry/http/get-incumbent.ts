import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import { NotFoundError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { getIncumbent } from '../incumbent.ts';

/** `GET /v1/incumbent`: the checkpoint sweeps and experiments compare against; 404 while none was ever set. */
export function makeGetIncumbentHandler(ports: Ports): HttpApiHandler {
  return httpApi(async () => {
    const incumbent = await getIncumbent(ports.records);
    if (!incumbent) throw new NotFoundError('no incumbent yet: shipping an experiment sets one');
    return { statusCode: 200, body: incumbent };
  });
}
