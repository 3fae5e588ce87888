/**
 * The API Gateway REQUEST authorizer (AWS), thin over `authorizeRequest`: the `x-api-key` header is looked up in the
 * records (`APIKEY#<sha256>`); a valid, unrevoked key is allowed on every method of the stage, with its tenant and
 * scopes in the authorizer context, which API Gateway caches by key (identity source `x-api-key`, TTL from the stack)
 * and passes to the handlers as `event.requestContext.authorizer`. The dispatcher checks the route's scope there
 * (403 naming it) and scopes the ports to the tenant: the same code path as the local server, which puts the same
 * context on its proxy events. Because the answer is cached per key and not per route, the policy covers the whole
 * stage and the scope check is the dispatcher's.
 *
 * Unknown or revoked keys get a Deny (403). API Gateway also keeps requiring the key under the usage plan
 * (`apiKeyRequired`, key source HEADER), which throttles each key on its own: a request needs both.
 */
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { ForbiddenError } from './forbidden-error.ts';
import type { RecordsPort } from '../ports/records.ts';
import { authorizeRequest, toAuthorizerContext } from './authorize-request.ts';

/** `arn:aws:execute-api:<region>:<account>:<apiId>/<stage>/*`: every method of the stage the request came to. */
export function stageArnPattern(methodArn: string): string {
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*`;
}

export function makeApiAuthorizer(records: RecordsPort): (event: APIGatewayRequestAuthorizerEvent) => Promise<APIGatewayAuthorizerResult> {
  return async (event) => {
    const headers = event.headers ?? {};
    const key = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-api-key')?.[1] ?? undefined;
    const resource = stageArnPattern(event.methodArn);
    try {
      const principal = await authorizeRequest(records, key);
      return {
        principalId: principal.keyId,
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }] },
        context: toAuthorizerContext(principal),
      };
    } catch (error) {
      if (!(error instanceof ForbiddenError)) throw error; // a store failure: API Gateway answers 500, not a cached Deny
      return {
        principalId: 'anonymous',
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: resource }] },
        context: { reason: (error as Error).message },
      };
    }
  };
}
