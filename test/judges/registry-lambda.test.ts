/** The `judges/api` Lambda entry: Powertools middlewares over the shared dispatcher, serving only the judges routes. */
import { beforeAll, describe, expect, it } from 'vitest';
import { routesOf } from '../../lib/api/routes.ts';
import { apiEvent, lambdaContext, stubApiLambdaEnv } from '../support/lambda-events.ts';

const context = lambdaContext();

beforeAll(() => {
  stubApiLambdaEnv();
});

describe('functions/judges/api', () => {
  it('serves the registry routes, validates before touching a port, and answers no other route', async () => {
    expect(routesOf('judges/api').map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining([
      'GET /v1/judges',
      'GET /v1/judges/{name}',
      'GET /v1/judges/{name}/calibrations',
      'POST /v1/judges',
      'POST /v1/judges/{name}/promote',
      'POST /v1/judges/{name}/retire',
    ]));
    const { handler } = await import('../../functions/judges/api.ts');
    const bad = await handler(apiEvent('POST', '/v1/judges', JSON.stringify({ name: 'j', kind: 'oracle' }), { 'Content-Type': 'application/json' }), context);
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['kind', 'model']));
    const force = await handler(apiEvent('POST', '/v1/judges/j/promote', JSON.stringify({ version: 'zz' }), { 'Content-Type': 'application/json' }), context);
    expect(force.statusCode).toBe(400);
    const other = await handler(apiEvent('GET', '/v1/suites', null, {}), context);
    expect(other.statusCode).toBe(404);
    expect(JSON.parse(other.body).error).toBe('Flywheel.RouteNotFound');
  });
});
