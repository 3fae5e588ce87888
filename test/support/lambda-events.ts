/**
 * Test harness over the REAL local drivers (SQLite records and queue, filesystem blobs, local bus) in a temporary
 * folder: API Gateway-shaped requests through the dispatcher, and queue messages drained into SQS-shaped events
 * for the processor, as the local runtime does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routes } from '../../lib/api/routes.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { makeProcessFeedbackHandler } from '../../lib/feedback/consumers/process-feedback.ts';
import type { QueueMessage } from '../../lib/ports/queue.ts';

export interface Harness {
  ports: LocalPorts;
  clock: { now: Date };
  counters: Map<string, number>;
  request(method: string, path: string, options?: { body?: unknown; rawBody?: string; headers?: Record<string, string>; query?: Record<string, string> }): Promise<{ status: number; json: any; headers: Record<string, unknown> }>;
  /** Receives what the ingest queue holds and hands it to the processor as one SQS event per 10 messages. */
  drain(): Promise<SQSBatchResponse[]>;
  process(event: SQSEvent): Promise<SQSBatchResponse>;
  close(): void;
}

export function openHarness(start = new Date('2026-12-02T10:00:00.000Z')): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-feedback-'));
  const clock = { now: start };
  const counters = new Map<string, number>();
  const base = openLocalPorts(dir, { now: () => clock.now, maxReceiveCount: 3 });
  const ports = Object.assign(base, {
    metrics: { count: (name: string, value = 1) => counters.set(name, (counters.get(name) ?? 0) + value) },
  });
  const dispatch = makeDispatcher(routes, ports);
  const processor = makeProcessFeedbackHandler(ports);
  return {
    ports,
    clock,
    counters,
    async request(method, path, options = {}) {
      const body = options.rawBody ?? (options.body === undefined ? null : JSON.stringify(options.body));
      const event = apiEvent(method, path, body, options.headers ?? (body === null ? {} : { 'Content-Type': 'application/json' }), options.query);
      const res: APIGatewayProxyResult = await dispatch(event);
      return { status: res.statusCode, json: JSON.parse(res.body), headers: res.headers ?? {} };
    },
    async drain() {
      const out: SQSBatchResponse[] = [];
      for (;;) {
        const messages = await ports.ingestQueue.receive({ maxMessages: 10, visibilityTimeoutSeconds: 30 });
        if (messages.length === 0) return out;
        const response = await processor(sqsEvent(messages));
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        for (const m of messages) if (!failed.has(m.messageId)) await ports.ingestQueue.delete(m.receiptHandle);
        out.push(response);
        if (failed.size > 0) return out;
      }
    },
    process: (event) => processor(event),
    close() {
      base.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The authorizer context of a key of the default tenant with every scope. */
export const ADMIN_CONTEXT = { tenant: 'default', scopes: 'ingest,read,admin', keyId: 'test' } as const;

/** The same event as another key's: `asKey(event, { tenant: 'acme', scopes: 'read' })`. */
export function asKey(event: APIGatewayProxyEvent, context: { tenant: string; scopes: string } | null): APIGatewayProxyEvent {
  return { ...event, requestContext: { ...event.requestContext, authorizer: context ? { keyId: 'test', ...context } : null } };
}

export function apiEvent(
  method: string,
  path: string,
  body: string | null,
  headers: Record<string, string>,
  query?: Record<string, string>,
): APIGatewayProxyEvent {
  return {
    httpMethod: method,
    path,
    resource: path,
    body,
    headers,
    multiValueHeaders: {},
    isBase64Encoded: false,
    pathParameters: null,
    queryStringParameters: query ?? null,
    multiValueQueryStringParameters: null,
    stageVariables: null,
    // What the authorizer (Lambda on AWS, the local server's key check) puts there: an admin key of the default tenant
    // unless a test says otherwise (`asKey`).
    requestContext: { authorizer: { ...ADMIN_CONTEXT } } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

export function sqsRecord(messageId: string, body: string, receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: '0',
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:ingest',
    awsRegion: 'local',
  };
}

export function sqsEvent(messages: QueueMessage[]): SQSEvent {
  return { Records: messages.map((m) => sqsRecord(m.messageId, m.body, m.receiveCount)) };
}

/** A Lambda context as the runtime passes it, so Powertools' injectLambdaContext has what it reads. */
export function lambdaContext(name = 'flywheel-test', memoryLimitInMB = '256'): Context {
  return {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
    memoryLimitInMB,
    awsRequestId: 'req-1',
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 's',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
  } as unknown as Context;
}

/**
 * The environment of an API Lambda entry, with endpoints that are never called: the requests these tests make are
 * answered before any port is used.
 */
export function stubApiLambdaEnv(): void {
  process.env.FLYWHEEL_TABLE = 'table';
  process.env.FLYWHEEL_BUCKET = 'bucket';
  process.env.FLYWHEEL_INGEST_QUEUE_URL = 'http://127.0.0.1:9/queue/ingest';
  process.env.FLYWHEEL_INGEST_DLQ_URL = 'http://127.0.0.1:9/queue/ingest-dlq';
  process.env.FLYWHEEL_EVENT_BUS = 'bus';
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
}
