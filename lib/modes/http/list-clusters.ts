import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { clusterComments } from '../clusters/cluster-comments.ts';
import { EMBEDDING_MODEL_ENV, ModelNotConfiguredError } from '../modes-models.ts';

/**
 * `GET /v1/clusters?since=&until=&threshold=&minCount=&model=`: recurring complaints, candidate modes first. Comments
 * are embedded by the classify consumer; with no embedding model configured and nothing embedded, a 503 says so.
 */
export function makeListClustersHandler(ports: Ports): HttpApiHandler {
  return httpApi(async (event) => {
    const result = await clusterComments(ports, event.queryStringParameters ?? {});
    const configured = !!process.env[EMBEDDING_MODEL_ENV]?.trim();
    if (!configured && result.comments === 0) throw new ModelNotConfiguredError('Clustering comments', EMBEDDING_MODEL_ENV);
    return { statusCode: 200, body: { ...result, embeddingModel: configured ? process.env[EMBEDDING_MODEL_ENV] : null } };
  });
}
