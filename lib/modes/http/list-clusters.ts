import { httpApi, type HttpApiHandler } from '../../api/http-api.ts';
import type { Ports } from '../../ports/ports.ts';
import { clusterComments } from '../clusters/cluster-comments.ts';
import { EMBEDDING_MODEL_ENV, ModelNotConfiguredError, modesModelsFromEnv } from '../modes-models.ts';

/**
 * `GET /v1/clusters?since=&until=&minClusterSize=&minSamples=&minCount=&model=&embeddingModel=`: recurring
 * complaints (HDBSCAN over one embedding model's vectors), candidate modes first; `suggestNames=model` has the judge
 * model (`FLYWHEEL_JUDGE_MODEL`, when set) name up to 10 candidates. Comments are embedded by the
 * classify consumer; with no embedding model configured and nothing embedded, a 503 says so. `embeddingModel` in the
 * answer is the model whose vectors were clustered; `configuredEmbeddingModel` the one new comments are embedded with.
 */
export function makeListClustersHandler(ports: Ports): HttpApiHandler {
  const { judge } = modesModelsFromEnv();
  return httpApi(async (event) => {
    const result = await clusterComments(ports, event.queryStringParameters ?? {}, judge ? { namer: judge } : {});
    const configured = !!process.env[EMBEDDING_MODEL_ENV]?.trim();
    if (!configured && result.comments === 0) throw new ModelNotConfiguredError('Clustering comments', EMBEDDING_MODEL_ENV);
    return { statusCode: 200, body: { ...result, configuredEmbeddingModel: configured ? process.env[EMBEDDING_MODEL_ENV] : null } };
  });
}
