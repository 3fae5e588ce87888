import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BODY_LIMITS } from '../../lib/api/http-api.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { openHarness, type Harness } from '../support/lambda-events.ts';

let h: Harness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.close());

describe('the HTTP edge', () => {
  it('answers 400 Flywheel.MalformedJson for a body that is not JSON', async () => {
    const res = await h.request('POST', '/v1/feedback', { rawBody: '{"eventId": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('Flywheel.MalformedJson');
    expect(res.json.message).toMatch(/^Request body is not valid JSON: /);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers 413 with the limit before parsing an oversized body', async () => {
    // Not even JSON: the size check must come first.
    const rawBody = 'x'.repeat(BODY_LIMITS.feedback + 1);
    const res = await h.request('POST', '/v1/feedback', { rawBody, headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({
      error: 'Flywheel.PayloadTooLarge',
      message: `Request body is ${BODY_LIMITS.feedback + 1} bytes; the limit is ${BODY_LIMITS.feedback} bytes`,
    });
    const report = await h.request('POST', '/v1/reports', { rawBody: 'é'.repeat(BODY_LIMITS.reports / 2 + 1), headers: { 'Content-Type': 'application/json' } });
    expect(report.status).toBe(413);
    expect(report.json.message).toContain(`the limit is ${BODY_LIMITS.reports} bytes`);
  });

  it('answers 415 unless the content type is JSON, accepting a UTF-8 charset in any header case', async () => {
    const body = JSON.stringify(feedbackEvent());
    const text = await h.request('POST', '/v1/feedback', { rawBody: body, headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.json.error).toBe('Flywheel.UnsupportedMediaType');
    const none = await h.request('POST', '/v1/feedback', { rawBody: body, headers: {} });
    expect(none.status).toBe(415);
    const latin = await h.request('POST', '/v1/feedback', { rawBody: body, headers: { 'content-type': 'application/json; charset=iso-8859-1' } });
    expect(latin.status).toBe(415);
    const ok = await h.request('POST', '/v1/feedback', { rawBody: body, headers: { 'CONTENT-TYPE': 'Application/JSON; charset=UTF-8' } });
    expect(ok.status).toBe(202);
  });

  it('accepts a base64-encoded body as API Gateway may send it', async () => {
    const { apiEvent } = await import('../support/lambda-events.ts');
    const { makeDispatcher } = await import('../../lib/api/dispatch.ts');
    const { routes } = await import('../../lib/api/routes.ts');
    const event = apiEvent('POST', '/v1/feedback', Buffer.from(JSON.stringify(feedbackEvent({ eventId: 'b64-1' }))).toString('base64'), {
      'content-type': 'application/json',
    });
    event.isBase64Encoded = true;
    const res = await makeDispatcher(routes, h.ports)(event);
    expect(res.statusCode).toBe(202);
  });

  it('answers 404 for an unknown path and 405 with Allow for a known path with another method', async () => {
    const unknown = await h.request('GET', '/v1/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe('Flywheel.RouteNotFound');
    const wrong = await h.request('DELETE', '/v1/feedback');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST, GET');
  });

  it('dispatches on resource + method as API Gateway sends them, and on a plain path for the local server', async () => {
    await h.request('POST', '/v1/feedback', { body: feedbackEvent({ eventId: 'route-1' }) });
    await h.drain();
    const { apiEvent } = await import('../support/lambda-events.ts');
    const { makeDispatcher } = await import('../../lib/api/dispatch.ts');
    const { routes } = await import('../../lib/api/routes.ts');
    const dispatch = makeDispatcher(routes, h.ports);
    const gateway = apiEvent('GET', '/v1/feedback/route-1', null, {});
    gateway.resource = '/v1/feedback/{eventId}';
    gateway.pathParameters = { eventId: 'route-1' };
    const viaResource = await dispatch(gateway);
    expect(viaResource.statusCode).toBe(200);
    expect(JSON.parse(viaResource.body).eventId).toBe('route-1');
    const viaPath = await h.request('GET', '/v1/feedback/route-1');
    expect(viaPath.status).toBe(200);
    expect(viaPath.json.eventId).toBe('route-1');
  });

  it('maps an unexpected failure to a 500 that reveals nothing', async () => {
    const { makeDispatcher } = await import('../../lib/api/dispatch.ts');
    const { routes } = await import('../../lib/api/routes.ts');
    const { apiEvent } = await import('../support/lambda-events.ts');
    const broken = {
      ...h.ports,
      ingestQueue: { ...h.ports.ingestQueue, send: async () => { throw new Error('disk on fire at /secret/path'); } },
    };
    const original = console.error;
    const logged: string[] = [];
    console.error = (line: string) => logged.push(line);
    try {
      const res = await makeDispatcher(routes, broken as never)(
        apiEvent('POST', '/v1/feedback', JSON.stringify(feedbackEvent()), { 'content-type': 'application/json' }),
      );
      expect(res.statusCode).toBe(500);
      expect(JSON.parse(res.body)).toEqual({ error: 'Flywheel.InternalError', message: 'Internal error' });
    } finally {
      console.error = original;
    }
    expect(JSON.parse(logged[0]!)).toMatchObject({ level: 'ERROR', error: { message: 'disk on fire at /secret/path' } });
  });
});
