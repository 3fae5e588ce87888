import { beforeAll, describe, expect, it } from 'vitest';
import { apiEvent, lambdaContext, stubApiLambdaEnv } from '../support/lambda-events.ts';

const context = lambdaContext();

beforeAll(() => {
  stubApiLambdaEnv();
});

describe('Lambda entries (Powertools middlewares over the shared handlers)', () => {
  it('functions/feedback/ingest answers through the HTTP edge', async () => {
    const { handler } = await import('../../functions/feedback/ingest.ts');
    const res = await handler(apiEvent('POST', '/v1/feedback', 'hello', { 'Content-Type': 'text/plain' }), context);
    expect(res.statusCode).toBe(415);
    // The query routes belong to another function.
    const other = await handler(apiEvent('GET', '/v1/feedback/x', null, {}), context);
    expect(other.statusCode).toBe(404);
    expect(JSON.parse(other.body).error).toBe('Flywheel.RouteNotFound');
  });

  it('functions/api/openapi serves the document', async () => {
    const { handler } = await import('../../functions/api/openapi.ts');
    const res = await handler(apiEvent('GET', '/v1/openapi.json', null, {}), context);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(JSON.parse(res.body).paths)).toEqual(expect.arrayContaining(['/v1/feedback', '/v1/reports', '/v1/openapi.json']));
  });

  it('functions/feedback/process reports a poison record as a batch item failure', async () => {
    const { handler } = await import('../../functions/feedback/process.ts');
    const res = await handler({ Records: [{ messageId: 'm-1', body: 'not json' } as never] }, context);
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
  });
});

describe('registry Lambda entries (Powertools middlewares over the shared handlers)', () => {
  it('functions/registry/api validates before touching a port, and serves only its routes', async () => {
    const { handler } = await import('../../functions/registry/api.ts');
    const bad = await handler(apiEvent('POST', '/v1/checkpoints', JSON.stringify({ id: 'x' }), { 'Content-Type': 'application/json' }), context);
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['model', 'serving']));
    const other = await handler(apiEvent('GET', '/v1/sweeps/s1', null, {}), context);
    expect(other.statusCode).toBe(404);
  });

  it('functions/registry/sweeps-api validates the sweep request', async () => {
    const { handler } = await import('../../functions/registry/sweeps-api.ts');
    const bad = await handler(apiEvent('POST', '/v1/sweeps', JSON.stringify({ modes: ['loose'] }), { 'Content-Type': 'application/json' }), context);
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).issues[0].path).toBe('modes[0]');
  });
});
