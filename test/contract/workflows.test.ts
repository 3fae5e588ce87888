import { CreateStateMachineCommand, SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StepFunctionsWorkflows, continuationName, stateMachineEnvName } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import type { LocalWorkflowSpec } from '../../lib/drivers/local/workflows/workflow-spec.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { motoEndpoint, uniqueName } from '../support/aws-test-resources.ts';
import { waitFor } from '../support/wait-for.ts';
import { describeWorkflowsContract } from './workflows.contract.ts';

const echo = { StartAt: 'Echo', States: { Echo: { Type: 'Pass', Parameters: { 'echoed.$': '$.value' }, End: true } } };
const fail = { StartAt: 'Boom', States: { Boom: { Type: 'Fail', Error: 'Flywheel.Boom', Cause: 'on purpose' } } };
const slow = { StartAt: 'Nap', TimeoutSeconds: 1, States: { Nap: { Type: 'Wait', Seconds: 5, End: true } } };

const sfn = new SFNClient({ endpoint: motoEndpoint(), region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });

async function createMachine(definition: object): Promise<string> {
  const created = await sfn.send(
    new CreateStateMachineCommand({ name: uniqueName('flywheel-sm'), definition: JSON.stringify(definition), roleArn: 'arn:aws:iam::123456789012:role/flywheel-sfn' }),
  );
  return created.stateMachineArn!;
}

/** Ends an execution on moto (which runs no definition) as a person aborting it would. */
const stopExecution = async (executionArn: string) => {
  await sfn.send(new StopExecutionCommand({ executionArn, error: 'Flywheel.Stopped', cause: 'test' }));
};

describeWorkflowsContract('Step Functions (moto)', async () => {
  const [echoArn, otherArn] = await Promise.all([createMachine(echo), createMachine(echo)]);
  return {
    workflows: new StepFunctionsWorkflows(sfn, { echo: echoArn, other: otherArn }),
    workflow: 'echo',
    otherWorkflow: 'other',
    resumable: { workflow: 'echo', endUnsuccessfully: stopExecution },
    // moto runs no definition: every execution stays RUNNING until stopped.
    longRunning: 'echo',
  };
});

const dirs: string[] = [];
const opened: LocalWorkflows[] = [];
afterAll(async () => {
  for (const w of opened) await w.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function localWorkflows(specs: Record<string, LocalWorkflowSpec> = { echo: { definition: echo, lambdas: {} }, other: { definition: echo, lambdas: {} }, fail: { definition: fail, lambdas: {} }, slow: { definition: slow, lambdas: {} } }, dir?: string) {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'flywheel-workflows-'));
  if (!dir) dirs.push(dataDir);
  const workflows = new LocalWorkflows(openDatabase(join(dataDir, 'workflows.sqlite')), specs);
  opened.push(workflows);
  return { workflows, dataDir };
}

/** A Lambda step that fails the first time it sees a value and succeeds after: an execution that a resume completes. */
const failsOnce = { StartAt: 'Flaky', States: { Flaky: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'flaky', 'Payload.$': '$' }, TimeoutSeconds: 10, End: true } } };
function flakyLambda(): (payload: unknown) => Promise<unknown> {
  const seen = new Set<string>();
  return async (payload) => {
    const key = JSON.stringify(payload);
    if (!seen.has(key)) {
      seen.add(key);
      throw Object.assign(new Error('first time fails'), { name: 'Flywheel.Flaky' });
    }
    return { ok: true };
  };
}

describeWorkflowsContract('local (aws-local-stepfunctions + SQLite)', async () => {
  const { workflows } = localWorkflows({
    echo: { definition: echo, lambdas: {} },
    other: { definition: echo, lambdas: {} },
    flaky: { definition: failsOnce, lambdas: { flaky: flakyLambda() } },
    nap: { definition: { StartAt: 'Nap', States: { Nap: { Type: 'Wait', Seconds: 600, End: true } } }, lambdas: {} },
  });
  return {
    workflows,
    workflow: 'echo',
    otherWorkflow: 'other',
    resumable: { workflow: 'flaky', endUnsuccessfully: async (executionId) => void (await workflows.waitFor(executionId)) },
    longRunning: 'nap',
  };
});

describe('StepFunctionsWorkflows', () => {
  it('maps workflow names from FLYWHEEL_STATE_MACHINE_<NAME>', () => {
    expect(stateMachineEnvName('sweep')).toBe('FLYWHEEL_STATE_MACHINE_SWEEP');
    expect(stateMachineEnvName('train-run')).toBe('FLYWHEEL_STATE_MACHINE_TRAIN_RUN');
    const workflows = StepFunctionsWorkflows.fromEnv({ FLYWHEEL_STATE_MACHINE_SWEEP: 'arn:a', FLYWHEEL_STATE_MACHINE_TRAIN_RUN: 'arn:b', OTHER: 'x' }, sfn);
    return expect(workflows.start('nope', { name: 'n', input: {} })).rejects.toThrow(/known: sweep, train-run/);
  });

  it('an aborted execution that Step Functions cannot redrive is continued as <name>.r2, then found again', async () => {
    const arn = await createMachine(echo);
    const workflows = new StepFunctionsWorkflows(sfn, { echo: arn });
    const { executionId } = await workflows.start('echo', { name: 'closed-1', input: { value: 1 } });
    await stopExecution(executionId);
    const stopped = await workflows.describe(executionId);
    expect(stopped).toMatchObject({ status: 'ABORTED', input: { value: 1 } });
    expect(stopped.stoppedAt).toBeGreaterThanOrEqual(stopped.startedAt);
    const continued = await workflows.start('echo', { name: 'closed-1', input: { value: 1 } });
    expect(continued.executionId).toBe(`${executionId}.r2`);
    expect(await workflows.describe(continued.executionId)).toMatchObject({ name: 'closed-1.r2', status: 'RUNNING', input: { value: 1 } });
    await stopExecution(continued.executionId);
    expect((await workflows.start('echo', { name: 'closed-1', input: { value: 1 } })).executionId).toBe(`${executionId}.r3`);
    await expect(workflows.start('echo', { name: 'closed-1', input: { value: 2 } })).rejects.toMatchObject({ name: 'Flywheel.ExecutionAlreadyExists' });
  });

  it('continuation names stay within 80 characters', () => {
    const long = 'x'.repeat(80);
    expect(continuationName(long, 1)).toBe(long);
    expect(continuationName(long, 2)).toHaveLength(80);
    expect(continuationName(long, 2).endsWith('.r2')).toBe(true);
    expect(continuationName('nightly', 12)).toBe('nightly.r12');
  });

  it('a redrivable execution is redriven (one client token for concurrent callers), not continued, over the wire', async () => {
    const arn = await createMachine(echo);
    const redriving = await redriveFront();
    try {
      const client = new SFNClient({ endpoint: redriving.url, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
      const workflows = new StepFunctionsWorkflows(client, { echo: arn });
      const { executionId } = await workflows.start('echo', { name: 'redrive-1', input: { value: 1 } });
      await stopExecution(executionId);
      const [a, b] = await Promise.all([
        workflows.start('echo', { name: 'redrive-1', input: { value: 1 } }),
        workflows.start('echo', { name: 'redrive-1', input: { value: 1 } }),
      ]);
      expect(a).toEqual({ executionId });
      expect(b).toEqual({ executionId });
      // Two callers at once may both ask; they ask with one token, so Step Functions redrives once.
      expect(redriving.redrives.length).toBeGreaterThanOrEqual(1);
      for (const r of redriving.redrives) expect(r).toEqual({ executionArn: executionId, clientToken: 'redrive-1' });
      expect(await workflows.describe(executionId)).toMatchObject({ status: 'RUNNING' });
      const asked = redriving.redrives.length;
      expect(await workflows.start('echo', { name: 'redrive-1', input: { value: 1 } })).toEqual({ executionId });
      expect(redriving.redrives).toHaveLength(asked);
    } finally {
      await redriving.close();
    }
  });
});

/**
 * Step Functions' RedriveExecution in front of moto, which has none: a proxy on loopback that forwards every call to
 * moto, answers RedriveExecution itself (idempotent per client token, as Step Functions is) and makes DescribeExecution
 * say what Step Functions says of an aborted execution (REDRIVABLE; RUNNING again once redriven), and SUCCEEDED of
 * the executions in `succeeded` (moto runs no definition, so none of its executions ever succeeds).
 */
async function redriveFront(succeeded: Set<string> = new Set()): Promise<{ url: string; redrives: Array<{ executionArn: string; clientToken: string }>; close: () => Promise<void> }> {
  const redrives: Array<{ executionArn: string; clientToken: string }> = [];
  const redriven = new Set<string>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const target = String(req.headers['x-amz-target'] ?? '');
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(json));
    };
    if (target === 'AWSStepFunctions.RedriveExecution') {
      const request = JSON.parse(body) as { executionArn: string; clientToken: string };
      redrives.push(request);
      redriven.add(request.executionArn);
      return reply(200, { redriveDate: Date.now() / 1000 });
    }
    if (target === 'AWSStepFunctions.StartExecution') {
      // A closed execution's name is taken (moto, whose executions never close, would start it idempotently).
      const request = JSON.parse(body) as { stateMachineArn: string; name: string };
      const arn = `${request.stateMachineArn.replace(':stateMachine:', ':execution:')}:${request.name}`;
      if (succeeded.has(arn)) return reply(400, { __type: 'ExecutionAlreadyExists', message: `Execution Already Exists: '${arn}'` });
    }
    // moto picks the service from the signature's credential scope: forward the headers as they came.
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length' && k !== 'connection').map(([k, v]) => [k, String(v)]));
    const upstream = await fetch(`${motoEndpoint()}${req.url ?? '/'}`, { method: 'POST', headers, body });
    const text = await upstream.text();
    if (target !== 'AWSStepFunctions.DescribeExecution' || !upstream.ok) {
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/x-amz-json-1.0' });
      return res.end(text);
    }
    const described = JSON.parse(text) as { executionArn: string; status: string; redriveStatus?: string; redriveCount?: number };
    if (succeeded.has(described.executionArn)) Object.assign(described, { status: 'SUCCEEDED', redriveStatus: 'NOT_REDRIVABLE' });
    else if (redriven.has(described.executionArn)) Object.assign(described, { status: 'RUNNING', redriveCount: 1, redriveStatus: 'NOT_REDRIVABLE' });
    else if (described.status !== 'RUNNING' && described.status !== 'SUCCEEDED') Object.assign(described, { redriveStatus: 'REDRIVABLE', redriveCount: 0 });
    return reply(200, described);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, redrives, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('again: a succeeded execution run once more', () => {
  it('on AWS: a continuation after the last link; a running one is returned; a plain start answers the newest run', async () => {
    const arn = await createMachine(echo);
    const succeeded = new Set<string>();
    const front = await redriveFront(succeeded);
    try {
      const client = new SFNClient({ endpoint: front.url, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
      const workflows = new StepFunctionsWorkflows(client, { echo: arn });
      const start = (again?: boolean) => workflows.start('echo', { name: 'again-1', input: { value: 1 }, ...(again ? { again } : {}) });
      const { executionId } = await start();
      expect(await start(true)).toEqual({ executionId }); // running: returned, again or not
      succeeded.add(executionId);
      expect(await start()).toEqual({ executionId });
      expect(await start(true)).toEqual({ executionId: `${executionId}.r2` });
      expect(await start(true)).toEqual({ executionId: `${executionId}.r2` }); // .r2 runs
      succeeded.add(`${executionId}.r2`);
      expect(await start()).toEqual({ executionId: `${executionId}.r2` }); // the newest run answers
      expect(await start(true)).toEqual({ executionId: `${executionId}.r3` });
      expect(front.redrives).toEqual([]);
    } finally {
      await front.close();
    }
  });

  it('locally: the same execution, run again as a new generation; without again it is returned as it is', async () => {
    const { workflows } = localWorkflows();
    const { executionId } = await workflows.start('echo', { name: 'again-1', input: { value: 7 } });
    expect(await workflows.waitFor(executionId)).toMatchObject({ status: 'SUCCEEDED', output: { echoed: 7 } });
    expect(await workflows.start('echo', { name: 'again-1', input: { value: 7 } })).toEqual({ executionId });
    expect(workflows.runs(executionId)).toBe(1);
    expect(await workflows.start('echo', { name: 'again-1', input: { value: 7 }, again: true })).toEqual({ executionId });
    expect(await workflows.waitFor(executionId)).toMatchObject({ status: 'SUCCEEDED', output: { echoed: 7 } });
    expect(workflows.runs(executionId)).toBe(2);
  });
});

describe('LocalWorkflows', () => {
  it('runs an execution to its end: SUCCEEDED with output, FAILED with error and cause, TIMED_OUT', async () => {
    const { workflows } = localWorkflows();
    const ok = await workflows.start('echo', { name: 'ok', input: { value: 42 } });
    const bad = await workflows.start('fail', { name: 'bad', input: {} });
    const late = await workflows.start('slow', { name: 'late', input: {} });
    expect(await workflows.waitFor(ok.executionId)).toMatchObject({ status: 'SUCCEEDED', output: { echoed: 42 } });
    expect(await workflows.waitFor(bad.executionId)).toMatchObject({ status: 'FAILED', error: 'Flywheel.Boom', cause: 'on purpose' });
    const timedOut = await workflows.waitFor(late.executionId, { timeoutMs: 10_000 });
    expect(timedOut).toMatchObject({ status: 'TIMED_OUT', error: 'States.Timeout' });
    expect(timedOut.stoppedAt! - timedOut.startedAt).toBeLessThan(4000);
    expect((await workflows.list('echo')).map((e) => e.name)).toEqual(['ok']);
    expect(workflows.history(ok.executionId).map((e) => e.type)).toEqual(['ExecutionStarted', 'StateEntered', 'StateExited', 'ExecutionSucceeded']);
  });

  it('executions survive as records: another instance (another process) describes them', async () => {
    const { workflows, dataDir } = localWorkflows();
    const { executionId } = await workflows.start('echo', { name: 'kept', input: { value: 'v' } });
    await workflows.waitFor(executionId);
    const reader = localWorkflows(undefined, dataDir).workflows;
    expect(await reader.describe(executionId)).toMatchObject({ status: 'SUCCEEDED', output: { echoed: 'v' } });
  });

  it('an execution stopped with its runtime resumes on the next start of its name, or by resumeInterrupted()', async () => {
    const specs: Record<string, LocalWorkflowSpec> = { echo: { definition: echo, lambdas: {} }, other: { definition: echo, lambdas: {} }, fail: { definition: fail, lambdas: {} }, slow: { definition: { StartAt: 'Nap', States: { Nap: { Type: 'Wait', Seconds: 1, End: true } } }, lambdas: {} } };
    const first = localWorkflows(specs);
    const a = await first.workflows.start('slow', { name: 'a', input: {} });
    const b = await first.workflows.start('slow', { name: 'b', input: {} });
    await first.workflows.close(); // as a crash leaves them: RUNNING, owned by a runner that is gone
    const second = localWorkflows(specs, first.dataDir).workflows;
    expect((await second.describe(a.executionId)).status).toBe('RUNNING');
    expect(await second.start('slow', { name: 'a', input: {} })).toEqual(a);
    expect(second.resumeInterrupted()).toEqual([b.executionId]);
    expect(second.resumeInterrupted()).toEqual([]);
    expect((await second.waitFor(a.executionId, { timeoutMs: 10_000 })).status).toBe('SUCCEEDED');
    expect((await second.waitFor(b.executionId, { timeoutMs: 10_000 })).status).toBe('SUCCEEDED');
    expect(second.runs(a.executionId)).toBe(2);
  });

  it('stop keeps its error and cause; another process (the CLI) can stop an execution this one runs; started again it runs again', async () => {
    const nap = { definition: { StartAt: 'Nap', States: { Nap: { Type: 'Wait', Seconds: 600, End: true } } }, lambdas: {} };
    const finished: string[] = [];
    const dataDir = mkdtempSync(join(tmpdir(), 'flywheel-workflows-'));
    dirs.push(dataDir);
    const runner = new LocalWorkflows(openDatabase(join(dataDir, 'workflows.sqlite')), { nap }, { heartbeatMs: 50, onFinished: (e) => finished.push(`${e.name}:${e.status}`) });
    opened.push(runner);
    const here = await runner.start('nap', { name: 'here', input: {} });
    await runner.stop(here.executionId, { error: 'Flywheel.Stopped', cause: 'by alice' });
    expect(await runner.describe(here.executionId)).toMatchObject({ status: 'ABORTED', error: 'Flywheel.Stopped', cause: 'by alice' });
    expect(finished).toEqual(['here:ABORTED']);
    // Another process (the CLI) stops an execution this runner runs: the row ends there, and the runner's heartbeat
    // aborts its run without writing an end over the stop.
    const there = await runner.start('nap', { name: 'there', input: {} });
    const cli = localWorkflows({ nap }, dataDir).workflows;
    await cli.stop(there.executionId);
    await waitFor(async () => ((await runner.describe(there.executionId)).status === 'ABORTED' ? true : undefined), { what: 'the stop from the other process to reach the row' });
    expect(await runner.describe(there.executionId)).toMatchObject({ status: 'ABORTED', error: 'States.Aborted' });
    // Started again, a stopped execution runs again (a resume), and can be stopped again.
    expect(await runner.start('nap', { name: 'here', input: {} })).toEqual(here);
    expect((await runner.describe(here.executionId)).status).toBe('RUNNING');
    expect(runner.runs(here.executionId)).toBe(2);
    await runner.stop(here.executionId);
    expect((await runner.describe(here.executionId)).status).toBe('ABORTED');
  });

  it('refuses a definition outside the two-runtime subset', () => {
    const jsonata = { QueryLanguage: 'JSONata', StartAt: 'P', States: { P: { Type: 'Pass', End: true } } };
    expect(() => localWorkflows({ bad: { definition: jsonata, lambdas: {} } } as never)).toThrow(/outside the two-runtime subset/);
  });
});
