/**
 * What the workflows port promises, on every driver: start by name returns an execution id that describe knows
 * (workflow, name, input, status, start time); the name is an idempotency key (same input → the same execution, any
 * number of times; another input → `Flywheel.ExecutionAlreadyExists`); an execution that ended unsuccessfully is
 * resumed by starting its name again; unknown ids, workflows and bad names fail with the port's error names.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { WorkflowsPort } from '../../lib/ports/workflows.ts';

export interface WorkflowsUnderTest {
  workflows: WorkflowsPort;
  /** A workflow the driver knows (a definition of Pass states: `{ echoed: <input.value> }`). */
  workflow: string;
  /** Another workflow it knows. */
  otherWorkflow: string;
  /** A workflow whose executions can be made to end unsuccessfully, and how (resolves once it has ended). */
  resumable: { workflow: string; endUnsuccessfully: (executionId: string) => Promise<void> };
  /** A workflow whose executions stay RUNNING for the length of a test (until stopped). */
  longRunning: string;
}

let counter = 0;
const uniqueName = (prefix: string) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;

export function describeWorkflowsContract(name: string, make: () => Promise<WorkflowsUnderTest>): void {
  describe(`workflows contract: ${name}`, () => {
    let under: WorkflowsUnderTest;
    beforeEach(async () => {
      under = await make();
    });

    it('starts an execution that describe knows: workflow, name, input, status, start time', async () => {
      const before = Date.now();
      const name = uniqueName('run');
      const input = { value: 'héllo', nested: { keys: ['a', 'b'], n: 2 } };
      const { executionId } = await under.workflows.start(under.workflow, { name, input });
      expect(typeof executionId).toBe('string');
      const execution = await under.workflows.describe(executionId);
      expect(execution).toMatchObject({ executionId, workflow: under.workflow, name, input });
      expect(['RUNNING', 'SUCCEEDED']).toContain(execution.status);
      expect(execution.startedAt).toBeGreaterThanOrEqual(before - 2000);
      expect(execution.startedAt).toBeLessThanOrEqual(Date.now() + 2000);
    });

    it('the name is an idempotency key: the same input (keys in any order) returns the same execution', async () => {
      const name = uniqueName('idem');
      const first = await under.workflows.start(under.workflow, { name, input: { value: 1, other: { x: 1, y: 2 } } });
      const second = await under.workflows.start(under.workflow, { name, input: { other: { y: 2, x: 1 }, value: 1 } });
      const third = await under.workflows.start(under.workflow, { name, input: { value: 1, other: { x: 1, y: 2 } } });
      expect(second).toEqual(first);
      expect(third).toEqual(first);
    });

    it('the same name with another input is refused', async () => {
      const name = uniqueName('clash');
      await under.workflows.start(under.workflow, { name, input: { value: 1 } });
      await expect(under.workflows.start(under.workflow, { name, input: { value: 2 } })).rejects.toMatchObject({ name: 'Flywheel.ExecutionAlreadyExists' });
    });

    it('names are per workflow: the same name in two workflows is two executions', async () => {
      const name = uniqueName('twice');
      const a = await under.workflows.start(under.workflow, { name, input: { value: 'a' } });
      const b = await under.workflows.start(under.otherWorkflow, { name, input: { value: 'b' } });
      expect(a.executionId).not.toBe(b.executionId);
      expect((await under.workflows.describe(b.executionId)).workflow).toBe(under.otherWorkflow);
    });

    it('an execution that ended unsuccessfully is resumed by its name and input, once, however often it is started', async () => {
      const name = uniqueName('resume');
      const input = { value: 'again' };
      const first = await under.workflows.start(under.resumable.workflow, { name, input });
      await under.resumable.endUnsuccessfully(first.executionId);
      expect(['FAILED', 'TIMED_OUT', 'ABORTED']).toContain((await under.workflows.describe(first.executionId)).status);
      const resumed = await under.workflows.start(under.resumable.workflow, { name, input });
      const again = await under.workflows.start(under.resumable.workflow, { name, input });
      expect(again).toEqual(resumed);
      const execution = await under.workflows.describe(resumed.executionId);
      expect(execution.input).toEqual(input);
      expect(['RUNNING', 'SUCCEEDED']).toContain(execution.status);
      await expect(under.workflows.start(under.resumable.workflow, { name, input: { value: 'other' } })).rejects.toMatchObject({ name: 'Flywheel.ExecutionAlreadyExists' });
    });

    it('stop ends a running execution ABORTED; stopping it again is harmless; an unknown id is ExecutionNotFound', async () => {
      const { executionId } = await under.workflows.start(under.longRunning, { name: uniqueName('stop'), input: { value: 'long' } });
      expect((await under.workflows.describe(executionId)).status).toBe('RUNNING');
      await under.workflows.stop(executionId, { error: 'Flywheel.Stopped', cause: 'stopped by the contract test' });
      const stopped = await under.workflows.describe(executionId);
      expect(stopped.status).toBe('ABORTED');
      expect(stopped.stoppedAt).toBeGreaterThanOrEqual(stopped.startedAt);
      await under.workflows.stop(executionId);
      expect((await under.workflows.describe(executionId)).status).toBe('ABORTED');
      await expect(under.workflows.stop(`${executionId}-nope`)).rejects.toMatchObject({ name: 'Flywheel.ExecutionNotFound' });
    });

    it('describe of an unknown execution throws Flywheel.ExecutionNotFound', async () => {
      const { executionId } = await under.workflows.start(under.workflow, { name: uniqueName('known'), input: {} });
      await expect(under.workflows.describe(`${executionId}-nope`)).rejects.toMatchObject({ name: 'Flywheel.ExecutionNotFound' });
    });

    it('an unknown workflow or an invalid name is refused', async () => {
      await expect(under.workflows.start('no-such-workflow', { name: uniqueName('x'), input: {} })).rejects.toMatchObject({ name: 'Flywheel.NotFoundError' });
      await expect(under.workflows.start(under.workflow, { name: 'has spaces and : colons', input: {} })).rejects.toMatchObject({ name: 'Flywheel.ValidationError' });
    });
  });
}
