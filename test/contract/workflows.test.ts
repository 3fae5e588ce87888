import { CreateStateMachineCommand, SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StepFunctionsWorkflows, stateMachineEnvName } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { LocalWorkflows, type LocalWorkflowSpec } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { motoEndpoint, uniqueName } from '../support/aws-test-resources.ts';
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

describeWorkflowsContract('Step Functions (moto)', async () => {
  const [echoArn, otherArn] = await Promise.all([createMachine(echo), createMachine(echo)]);
  return { workflows: new StepFunctionsWorkflows(sfn, { echo: echoArn, other: otherArn }), workflow: 'echo', otherWorkflow: 'other' };
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

describeWorkflowsContract('local (aws-local-stepfunctions + SQLite)', async () => ({ workflows: localWorkflows().workflows, workflow: 'echo', otherWorkflow: 'other' }));

describe('StepFunctionsWorkflows', () => {
  it('maps workflow names from FLYWHEEL_STATE_MACHINE_<NAME>', () => {
    expect(stateMachineEnvName('sweep')).toBe('FLYWHEEL_STATE_MACHINE_SWEEP');
    expect(stateMachineEnvName('train-run')).toBe('FLYWHEEL_STATE_MACHINE_TRAIN_RUN');
    const workflows = StepFunctionsWorkflows.fromEnv({ FLYWHEEL_STATE_MACHINE_SWEEP: 'arn:a', FLYWHEEL_STATE_MACHINE_TRAIN_RUN: 'arn:b', OTHER: 'x' }, sfn);
    return expect(workflows.start('nope', { name: 'n', input: {} })).rejects.toThrow(/known: sweep, train-run/);
  });

  it('a closed execution started again with the same input is returned, with another input refused', async () => {
    const arn = await createMachine(echo);
    const workflows = new StepFunctionsWorkflows(sfn, { echo: arn });
    const { executionId } = await workflows.start('echo', { name: 'closed-1', input: { value: 1 } });
    await sfn.send(new StopExecutionCommand({ executionArn: executionId, error: 'Flywheel.Stopped', cause: 'test' }));
    const stopped = await workflows.describe(executionId);
    expect(stopped).toMatchObject({ status: 'ABORTED', input: { value: 1 } });
    expect(stopped.stoppedAt).toBeGreaterThanOrEqual(stopped.startedAt);
    expect(await workflows.start('echo', { name: 'closed-1', input: { value: 1 } })).toEqual({ executionId });
    await expect(workflows.start('echo', { name: 'closed-1', input: { value: 2 } })).rejects.toMatchObject({ name: 'Flywheel.ExecutionAlreadyExists' });
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

  it('refuses a definition outside the two-runtime subset', () => {
    const jsonata = { QueryLanguage: 'JSONata', StartAt: 'P', States: { P: { Type: 'Pass', End: true } } };
    expect(() => localWorkflows({ bad: { definition: jsonata, lambdas: {} } } as never)).toThrow(/outside the two-runtime subset/);
  });
});
