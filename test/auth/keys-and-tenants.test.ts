/**
 * The AWS side of authorization, over DynamoDB on moto: key records, the Lambda REQUEST authorizer, its context read
 * by the dispatcher (the same code path as the local server), and tenant isolation of the records table; plus the
 * pieces the API tests lean on (bounded depth, the consent check of training reads, the scopes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { FREE_JSON_MAX_DEPTH, jsonDepth } from '../../lib/shared/json-bounds.ts';
import { routes } from '../../lib/api/routes.ts';
import { createApiKey, revokeApiKey } from '../../lib/auth/api-keys.ts';
import { makeApiAuthorizer, stageArnPattern } from '../../lib/auth/lambda-authorizer.ts';
import { hasScope, parseScopes } from '../../lib/auth/scopes.ts';
import { scopePortsToTenant, withTenant } from '../../lib/auth/tenant-ports.ts';
import { DynamoDbRecords } from '../../lib/drivers/aws/dynamodb-records.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { makeProcessFeedbackHandler } from '../../lib/feedback/consumers/process-feedback.ts';
import { readTrajectoryForTraining, TrainingConsentRequiredError } from '../../lib/feedback/training-trajectory.ts';
import type { DomainEvent } from '../../lib/ports/events.ts';
import type { Ports } from '../../lib/ports/ports.ts';
import { modeKeys } from '../../lib/modes/record-keys.ts';
import { createTestTable, motoClients, type MotoClients } from '../support/aws-test-resources.ts';
import { runCli } from '../e2e/runtime-process.ts';
import { feedbackEvent } from '../support/feedback-event.ts';
import { apiEvent, asKey, sqsEvent } from '../support/lambda-events.ts';

let aws: MotoClients;
let table: string;
let records: DynamoDbRecords;
let local: LocalPorts;
let dir: string;
const published: DomainEvent[] = [];
let ports: Ports;

beforeAll(async () => {
  aws = motoClients();
  table = await createTestTable(aws);
  records = new DynamoDbRecords(aws.documents, table);
  dir = mkdtempSync(join(tmpdir(), 'flywheel-auth-aws-'));
  local = openLocalPorts(dir);
  // Records on DynamoDB (moto); blobs and the queue local; events captured.
  ports = { ...local, records, events: { publish: async (events) => void published.push(...events) } };
});
afterAll(() => {
  local?.close();
  rmSync(dir, { recursive: true, force: true });
});

const METHOD_ARN = 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/v1/feedback';
const authorizerEvent = (key: string | undefined): APIGatewayRequestAuthorizerEvent =>
  ({ type: 'REQUEST', methodArn: METHOD_ARN, headers: key === undefined ? {} : { 'X-Api-Key': key } }) as unknown as APIGatewayRequestAuthorizerEvent;

/** What API Gateway hands the integration after the authorizer allowed the request. */
function authorized(event: APIGatewayProxyEvent, context: Record<string, unknown> | undefined): APIGatewayProxyEvent {
  return { ...event, requestContext: { ...event.requestContext, authorizer: context ?? null } };
}

describe('the Lambda authorizer over DynamoDB', () => {
  it('allows a valid key on the whole stage with its tenant and scopes, denies an unknown or revoked one', async () => {
    const authorize = makeApiAuthorizer(records);
    const { key, record } = await createApiKey(records, { tenant: 'acme', scopes: 'ingest,read', name: 'acme' }, new Date('2026-12-02T10:00:00Z'));
    const allowed = await authorize(authorizerEvent(key));
    expect(allowed).toEqual({
      principalId: record.keyId,
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*' }] },
      context: { tenant: 'acme', scopes: 'ingest,read', keyId: record.keyId },
    });
    expect(stageArnPattern(METHOD_ARN)).toBe('arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*');
    for (const bad of [undefined, 'fw_acme_unknown-key-0000000000000000']) {
      const denied = await authorize(authorizerEvent(bad));
      expect(denied.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    }
    await revokeApiKey(records, record.keyId, new Date('2026-12-02T11:00:00Z'));
    const revoked = await authorize(authorizerEvent(key));
    expect(revoked.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(revoked.context).toEqual({ reason: `Forbidden: API key ${record.keyId} was revoked at 2026-12-02T11:00:00.000Z` });
  });

  it('flywheel keys create --table writes a key the authorizer accepts', async () => {
    const { stdout } = await runCli(
      ['keys', 'create', '--tenant', 'cli-tenant', '--scopes', 'read', '--json', '--table', table, '--endpoint-url', aws.endpoint, '--region', 'us-east-1'],
      { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' },
    );
    const created = JSON.parse(stdout) as { key: string; keyId: string };
    const allowed = await makeApiAuthorizer(records)(authorizerEvent(created.key));
    expect(allowed.context).toEqual({ tenant: 'cli-tenant', scopes: 'read', keyId: created.keyId });
  });
});

describe('the dispatcher reads the authorizer context (one code path with the local server)', () => {
  it('is 403 without a context, 403 naming the scope the key lacks', async () => {
    const dispatch = makeDispatcher(routes, ports);
    const none = await dispatch(asKey(apiEvent('GET', '/v1/feedback', null, {}), null));
    expect(none.statusCode).toBe(403);
    const ingestOnly = await dispatch(asKey(apiEvent('GET', '/v1/suites', null, {}), { tenant: 'acme', scopes: 'ingest' }));
    expect(ingestOnly.statusCode).toBe(403);
    expect(JSON.parse(ingestOnly.body).message).toBe('Forbidden: listSuites needs the read scope; this key has ingest');
    const unknown = await dispatch(asKey(apiEvent('GET', '/v1/nope', null, {}), { tenant: 'acme', scopes: 'read' }));
    expect(unknown.statusCode).toBe(404);
  });

  it("keeps tenants apart in the records table: B never reads or lists A's event; the default tenant's keys are unchanged", async () => {
    const dispatch = makeDispatcher(routes, ports);
    const processor = makeProcessFeedbackHandler(ports);
    const { key } = await createApiKey(records, { tenant: 'tenant-a', scopes: 'ingest,read' }, new Date());
    const context = (await makeApiAuthorizer(records)(authorizerEvent(key))).context as Record<string, unknown>;
    const model = 'ckpt-iso';
    const event = feedbackEvent({ eventId: 'iso-aws-1', model, kind: 'comment', comment: 'only a sees this', trajectory: { inline: { turns: 1 } } });
    const post = await dispatch(authorized(apiEvent('POST', '/v1/feedback', JSON.stringify(event), { 'Content-Type': 'application/json' }), context));
    expect(post.statusCode).toBe(202);

    // The queue message names the tenant; the processor stores under the tenant's keys and publishes it.
    const messages = await local.ingestQueue.receive({ maxMessages: 10, visibilityTimeoutSeconds: 30 });
    expect(messages.map((m) => m.body.startsWith('{"tenant":"tenant-a",'))).toEqual([true]);
    const response: SQSBatchResponse = await processor(sqsEvent(messages));
    expect(response.batchItemFailures).toEqual([]);
    expect(await records.get('T#tenant-a#FEEDBACK#iso-aws-1', 'EVENT')).toMatchObject({ eventId: 'iso-aws-1', gsi1pk: 'T#tenant-a#MODEL#ckpt-iso' });
    expect(await records.get('FEEDBACK#iso-aws-1', 'EVENT')).toBeUndefined();
    expect(published.at(-1)).toMatchObject({ type: 'feedback.stored', detail: { eventIds: ['iso-aws-1'], tenant: 'tenant-a' } });
    // Its trajectory is in A's blobs, under a key the server chose.
    expect(await local.blobs.get('tenants/tenant-a/trajectories/feedback/iso-aws-1.json')).toBeDefined();

    const as = (tenant: string, path: string, query?: Record<string, string>) =>
      dispatch(asKey(apiEvent('GET', path, null, {}, query), { tenant, scopes: 'read' })).then((r) => ({ status: r.statusCode, json: JSON.parse(r.body) }));
    expect((await as('tenant-a', '/v1/feedback/iso-aws-1')).json).toMatchObject({ eventId: 'iso-aws-1', comment: 'only a sees this' });
    expect((await as('tenant-b', '/v1/feedback/iso-aws-1')).status).toBe(404);
    expect((await as('default', '/v1/feedback/iso-aws-1')).status).toBe(404);
    expect((await as('tenant-b', '/v1/feedback', { model })).json.items).toEqual([]);
    expect((await as('tenant-a', '/v1/feedback', { model })).json.items.map((i: { eventId: string }) => i.eventId)).toEqual(['iso-aws-1']);
  });

  it("a tenant's view prefixes every partition it writes and reads, and strips it on the way out", async () => {
    const view = scopePortsToTenant(ports, 'view-t');
    await view.records.put({ pk: 'SUITE#s', sk: 'SUITE', gsi1pk: 'SUITES', gsi1sk: 's', owner: 'v' });
    expect(await records.get('T#view-t#SUITE#s', 'SUITE')).toMatchObject({ gsi1pk: 'T#view-t#SUITES' });
    expect(await view.records.get('SUITE#s', 'SUITE')).toMatchObject({ pk: 'SUITE#s', gsi1pk: 'SUITES', owner: 'v' });
    expect((await view.records.query({ index: 'gsi1', partition: 'SUITES' })).items.map((i) => i.pk)).toEqual(['SUITE#s']);
    expect((await records.query({ index: 'gsi1', partition: 'SUITES' })).items.map((i) => i.pk)).not.toContain('SUITE#s');
    expect(scopePortsToTenant(ports, 'default')).toBe(ports);
    expect(scopePortsToTenant(ports, 'view-t').workflows).toBeUndefined();
    expect(() => scopePortsToTenant(ports, '../x')).toThrow(/not a tenant name/);
    expect(withTenant('{"v":1}', 'a')).toBe('{"tenant":"a","v":1}');
  });
});

describe('approvals draw repositories from configured sources', () => {
  it("refuses a draft's client-written repository (a server path) and a body's file:// one, naming the field", async () => {
    const dispatch = makeDispatcher(routes, ports);
    // The draft's repo came from the signals' `context.repo`, which an ingest key writes.
    await records.put({ ...modeKeys.draft('draft-p1'), status: 'pending', repo: { kind: 'git', url: '/srv/secrets', commit: 'abcdef1' }, instruction: 'x', lineage: { eventIds: [], reportIds: ['r'], clusterIds: [], modes: [] } });
    const approve = (body: unknown) =>
      dispatch(apiEvent('POST', '/v1/eval-drafts/draft-p1/approve', JSON.stringify(body), { 'Content-Type': 'application/json' })).then((r) => ({ status: r.statusCode, json: JSON.parse(r.body) }));
    const fromDraft = await approve({ approver: 'ana' });
    expect(fromDraft).toMatchObject({ status: 400, json: { issues: [{ path: 'repo.url', message: expect.stringContaining('no git remote is allowed') }] } });
    const local = await approve({ approver: 'ana', repo: { kind: 'local', path: '/etc' } });
    expect(local.json.issues).toEqual([{ path: 'repo.kind', message: 'a path on the server is never a task source through the API' }]);
    const file = await approve({ approver: 'ana', repo: { kind: 'git', url: 'file:///etc', commit: 'abcdef1' } });
    expect(file.json.issues).toEqual([{ path: 'repo.url', message: expect.any(String) }]);
    expect((await records.get(modeKeys.draft('draft-p1').pk, 'DRAFT'))?.status).toBe('pending');
  });
});

describe('scopes, bounds and consent', () => {
  it('admin implies read; ingest is only ingest', () => {
    expect(hasScope(['admin'], 'read')).toBe(true);
    expect(hasScope(['admin'], 'ingest')).toBe(false);
    expect(hasScope(['ingest'], 'read')).toBe(false);
    expect(() => parseScopes('read,root')).toThrow(/unknown scope "root"/);
  });

  it('measures depth iteratively, giving up past the limit', () => {
    let v: unknown = 1;
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(jsonDepth(v)).toBe(FREE_JSON_MAX_DEPTH + 1);
    expect(jsonDepth({ a: [1, { b: null }] })).toBe(3);
  });

  it('reads a trajectory for training only with consent (a named error otherwise)', async () => {
    await local.blobs.put('trajectories/feedback/c.json', '{"t":1}');
    const trajectory = { blobKey: 'trajectories/feedback/c.json' };
    await expect(readTrajectoryForTraining(local.blobs, { eventId: 'c', trainingConsent: false, trajectory })).rejects.toBeInstanceOf(TrainingConsentRequiredError);
    await expect(readTrajectoryForTraining(local.blobs, { eventId: 'c', trajectory })).rejects.toThrow('feedback c has no training consent');
    expect(Buffer.from((await readTrajectoryForTraining(local.blobs, { eventId: 'c', trainingConsent: true, trajectory }))!).toString()).toBe('{"t":1}');
  });
});
