/**
 * An HTTP server that speaks Athena's wire protocol (JSON 1.1: `POST /` with `X-Amz-Target: AmazonAthena.<Operation>`)
 * from a script, for what moto cannot show: a query that FAILED with a reason, a result in several pages, a start
 * that Athena refuses, the bytes a query scanned. The real SDK client talks to it over real HTTP; every call is kept
 * so a test can check what the driver sent.
 *
 * @example
 * const athena = await startAthenaStandIn({ StartQueryExecution: () => ({ QueryExecutionId: 'q1' }), … });
 * const client = new AthenaClient({ endpoint: athena.url, region: 'us-east-1', credentials });
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted answer: a JSON body (200), or an AWS error. */
export type StandInAnswer = Record<string, unknown> | { error: { type: string; message: string; status?: number } };
export type StandInScript = Record<string, (input: Record<string, unknown>, callIndex: number) => StandInAnswer>;

export interface AthenaStandIn {
  url: string;
  /** Every call in order: the operation and its input. */
  calls: Array<{ operation: string; input: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startAthenaStandIn(script: StandInScript): Promise<AthenaStandIn> {
  const calls: AthenaStandIn['calls'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const operation = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonAthena\./, '');
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const index = calls.filter((c) => c.operation === operation).length;
      calls.push({ operation, input });
      const handler = script[operation];
      const answer: StandInAnswer = handler
        ? handler(input, index)
        : { error: { type: 'UnknownOperationException', message: `the stand-in has no script for ${operation}` } };
      if ('error' in answer && typeof answer.error === 'object' && answer.error !== null) {
        const error = answer.error as { type: string; message: string; status?: number };
        response.writeHead(error.status ?? 400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': error.type });
        response.end(JSON.stringify({ __type: error.type, Message: error.message }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
