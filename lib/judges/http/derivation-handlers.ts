/**
 * Judge derivations over HTTP: the list, newest first, and one derivation with its report (each derived judge against
 * its teacher and against people, its cost per verdict, and whether it was promoted). Both read-only.
 */
import { z } from 'zod';
import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { getDerivation, listDerivations } from '../derive/read-derivations.ts';
import { parseInput } from '../../shared/parse-input.ts';

export const ListDerivationsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});
export const DerivationParams = z.strictObject({ id: z.string().min(1).max(256) });
export const GetDerivationQuery = z.strictObject({
  /** Look the derivation up by the top checkpoint it was made from instead of its id (`id` is then the checkpoint id). */
  by: z.enum(['id', 'checkpoint']).default('id'),
});

/** `GET /v1/judge-derivations?limit=&cursor=`. */
export function makeListDerivationsHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const q = parseInput(ListDerivationsQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listDerivations(ports, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) }) };
  });
}

/** `GET /v1/judge-derivations/{id}?by=id|checkpoint`: the derivation and its report; 404 if unknown. */
export function makeGetDerivationHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const { id } = parseInput(DerivationParams, event.pathParameters ?? {}, 'path');
    const q = parseInput(GetDerivationQuery, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await getDerivation(ports, q.by === 'checkpoint' ? { checkpointId: id } : { derivationId: id }) };
  });
}
