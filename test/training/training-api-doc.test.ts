/**
 * The training routes in the OpenAPI document (each operation with its parameters, its answers, the PNG one), and the
 * Lambda entries of training runs: `functions/training/api.ts` validates before touching a port and serves only its
 * routes, `functions/training/train-step.ts` refuses a step it does not know.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { routes } from '../../lib/api/routes.ts';
import { ErrorNames } from '../../lib/errors.ts';
import { apiEvent, lambdaContext, stubApiLambdaEnv } from '../support/lambda-events.ts';

const context = lambdaContext();

beforeAll(() => {
  stubApiLambdaEnv();
  process.env.FLYWHEEL_STATE_MACHINE_TRAIN_POLICY = 'arn:aws:states:us-east-1:000000000000:stateMachine:flywheel-test-train-policy';
});

describe('training routes in the OpenAPI document', () => {
  it('describes start, list, read, curves (JSON or PNG), stop and resume', () => {
    const doc = buildOpenApiDocument(routes) as { paths: Record<string, Record<string, any>> };
    const op = (path: string, method: string) => doc.paths[path]?.[method];
    expect(op('/v1/training-runs', 'post').operationId).toBe('postTrainingRun');
    expect(Object.keys(op('/v1/training-runs', 'post').responses)).toEqual(expect.arrayContaining(['200', '201', '400', '403', '413', '415']));
    expect(op('/v1/training-runs', 'get').parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'limit', 'status']);
    expect(op('/v1/training-runs/{runId}', 'get').operationId).toBe('getTrainingRun');
    expect(Object.keys(op('/v1/training-runs/{runId}', 'get').responses)).toContain('404');
    const curves = op('/v1/training-runs/{runId}/curves', 'get');
    expect(curves.operationId).toBe('getTrainingCurves');
    expect(curves.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['format', 'runId']);
    expect(Object.keys(curves.responses['200'].content).sort()).toEqual(['application/json', 'image/png']);
    expect(op('/v1/training-runs/{runId}/stop', 'post').operationId).toBe('stopTrainingRun');
    expect(op('/v1/training-runs/{runId}/resume', 'post').operationId).toBe('resumeTrainingRun');
    expect(op('/v1/training-runs/{runId}/resume', 'post').responses['400'].description).toMatch(/neither stopped nor failed/);
  });
});

describe('training Lambda entries', () => {
  it('functions/training/api validates a start before touching a port, and serves only its routes', async () => {
    const { handler } = await import('../../functions/training/api.ts');
    const bad = await handler(apiEvent('POST', '/v1/training-runs', JSON.stringify({ dataset: {} }), { 'Content-Type': 'application/json' }), context);
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).issues.map((i: { path: string }) => i.path)).toContain('base');
    const badQuery = await handler(apiEvent('GET', '/v1/training-runs/r-1/curves', null, {}, { format: 'svg' }), context);
    expect(badQuery.statusCode).toBe(400);
    const other = await handler(apiEvent('GET', '/v1/sweeps/x', null, {}), context);
    expect(other.statusCode).toBe(404);
    expect(JSON.parse(other.body).error).toBe('Flywheel.RouteNotFound');
  });

  it('functions/training/train-step refuses a step it does not know', async () => {
    const { handler } = await import('../../functions/training/train-step.ts');
    await expect(handler({ step: 'no-such-step', input: { runId: 'r-1' } }, context)).rejects.toMatchObject({ name: ErrorNames.validation });
  });
});
