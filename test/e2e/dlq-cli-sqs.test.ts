/**
 * `flywheel dlq list|redrive` against SQS (moto_server over the real wire protocol), as a CLI child process.
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createTestQueue, motoClients, motoEndpoint } from '../support/aws-test-resources.ts';
import { MOTO_ENV } from '../support/moto-global-setup.ts';
import { runCli } from './runtime-process.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';

// Four CLI processes in one test: the bound is for a hang, not for a busy machine's slow starts.
describe('flywheel dlq on SQS', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('lists dead letters without removing them and redrives at most --max back to the source queue', async () => {
    const aws = motoClients();
    const q = await createTestQueue(aws);
    const bodies = ['{"n":1}', '{"n":2}', '{"n":3}'];
    for (const body of bodies) await aws.sqs.send(new SendMessageCommand({ QueueUrl: q.deadLetterUrl, MessageBody: body }));
    const flags = ['--dlq-url', q.deadLetterUrl, '--queue-url', q.queueUrl, '--endpoint-url', motoEndpoint(), '--region', 'us-east-1'];
    const env = { ...MOTO_ENV };

    const listed = JSON.parse((await runCli(['dlq', 'list', '--json', ...flags], env)).stdout) as Array<{ body: string }>;
    expect(listed.map((m) => m.body).sort()).toEqual(bodies);
    // Still there: listing made them visible again.
    const again = JSON.parse((await runCli(['dlq', 'list', '--json', ...flags], env)).stdout) as unknown[];
    expect(again).toHaveLength(3);

    const result = JSON.parse((await runCli(['dlq', 'redrive', '--max', '2', '--json', ...flags], env)).stdout) as { moved: number };
    expect(result).toEqual({ moved: 2, failed: [] });
    const inSource = await aws.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: q.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }),
    );
    const left = JSON.parse((await runCli(['dlq', 'list', '--json', ...flags], env)).stdout) as Array<{ body: string }>;
    const moved = (inSource.Messages ?? []).map((m) => m.Body!);
    expect(moved).toHaveLength(2);
    expect([...moved, ...left.map((m) => m.body)].sort()).toEqual(bodies);
  });
});
