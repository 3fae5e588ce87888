import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { promoteCluster } from '../taxonomy/promote-cluster.ts';

/** Body limit of a promotion (a definition and up to 20 examples). */
export const PROMOTE_BODY_LIMIT = 64 * 1024;

/**
 * `POST /v1/clusters/{id}/promote` `{ id, name, definition, promotedBy, membersHash, examples? }`: the cluster becomes
 * a mode of a new taxonomy version; 201 with the version, the label mapping and the suggested labels. `membersHash` is
 * the one `GET /v1/clusters` showed: 409 if the cluster's members changed since, or it was (or is being) promoted.
 */
export function makePromoteClusterHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => ({ statusCode: 201, body: await promoteCluster(ports, event.pathParameters?.id ?? '', event.jsonBody) }), {
    jsonBodyMaxBytes: PROMOTE_BODY_LIMIT,
  });
}
