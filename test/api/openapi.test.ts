import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi.ts';
import { routes } from '../../lib/api/routes.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.close());

describe('the OpenAPI document', () => {
  it('is served at GET /v1/openapi.json and describes every route of the route table', async () => {
    const res = await h.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json;
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.operationId);
      // Open routes (the console's files, Slack's signed requests) carry no key; every other route needs one.
      if (!route.apiKeyRequired) {
        expect(op.security, `${route.method} ${route.path}`).toBeUndefined();
        continue;
      }
      expect(op.security).toEqual([{ ApiKey: [] }]);
      for (const status of ['400', '401', '403', '429']) expect(Object.keys(op.responses)).toContain(status);
    }
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const post = doc.paths['/v1/feedback'].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['202', '413', '415']));
    const get = doc.paths['/v1/feedback/{eventId}'].get;
    expect(get.parameters).toEqual([expect.objectContaining({ name: 'eventId', in: 'path', required: true })]);
    const list = doc.paths['/v1/feedback'].get;
    expect(list.parameters.map((p: any) => p.name).sort()).toEqual(['cursor', 'limit', 'model', 'rating', 'since', 'source', 'until']);
  });

  it('carries the zod schemas that validate requests', () => {
    const doc = buildOpenApiDocument(routes) as any;
    const schemas = doc.components.schemas;
    for (const name of ['FeedbackEventInput', 'FeedbackBatchInput', 'ReportInput', 'IngestResult', 'FeedbackRecord', 'FeedbackPage', 'Error', 'TrajectoryRef']) {
      expect(schemas[name], name).toBeDefined();
    }
    const event = schemas.FeedbackEventInput;
    expect(event.required).toEqual(expect.arrayContaining(['eventId', 'kind', 'traceId', 'sessionId', 'turnId', 'model', 'source', 'reporter', 'trainingConsent', 'occurredAt']));
    expect(event.additionalProperties).toBe(false);
    expect(schemas.FeedbackBatchInput.properties.events.maxItems).toBe(500);
    expect(schemas.ReportSeverity.enum).toEqual(['low', 'medium', 'high', 'critical']);
  });

  it('refuses a route without an OpenAPI description', () => {
    expect(() => buildOpenApiDocument([...routes, { ...routes[0]!, operationId: 'undocumented' }])).toThrow(/undocumented/);
  });
});
