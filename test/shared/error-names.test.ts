/**
 * Every error class carries the name its constant spells, so a state machine's ErrorEquals, a log query and an
 * `instanceof` in code agree on what was thrown.
 */
import { describe, expect, it } from 'vitest';
import { AwsDriverErrorNames, EventPublishError, QueueSendError, ResumeLimitExceededError } from '../../lib/drivers/aws/aws-driver-errors.ts';
import { JobNotFoundError } from '../../lib/drivers/job-errors.ts';
import { ConfigurationError, ConflictError, ErrorNames, FlywheelError, NotFoundError, TransientError, ValidationError } from '../../lib/errors.ts';
import { SandboxClosedError, SandboxDiffError, SandboxErrorNames, SandboxExecError, SandboxSetupError } from '../../lib/harness/sandbox/sandbox-errors.ts';
import { ModelErrorNames, ModelRequestError, ModelUnavailableError } from '../../lib/models/model-errors.ts';
import { JOB_NOT_FOUND } from '../../lib/ports/jobs.ts';
import { LAMBDA_STEP_ERRORS } from '../../lib/sweeps/workflow/retry-policies.ts';

describe('error names', () => {
  it.each([
    [new ValidationError('m'), ErrorNames.validation],
    [new TransientError('m'), ErrorNames.transient],
    [new ConflictError('m'), ErrorNames.conflict],
    [new NotFoundError('m'), ErrorNames.notFound],
    [new ConfigurationError('m'), ErrorNames.configuration],
    [new SandboxSetupError('m'), SandboxErrorNames.setup],
    [new SandboxExecError('m'), SandboxErrorNames.exec],
    [new SandboxClosedError('m'), SandboxErrorNames.closed],
    [new SandboxDiffError('m'), SandboxErrorNames.diff],
    [new QueueSendError('m'), AwsDriverErrorNames.queueSend],
    [new EventPublishError('m'), AwsDriverErrorNames.eventPublish],
    [new ResumeLimitExceededError('m'), AwsDriverErrorNames.resumeLimitExceeded],
    [new JobNotFoundError('j-1'), `Flywheel.${JOB_NOT_FOUND}`],
    [new ModelUnavailableError('m', 6), ModelErrorNames.unavailable],
    [new ModelRequestError('m', 400), ModelErrorNames.request],
  ] as const)('%s is named %s', (error, name) => {
    expect(error).toBeInstanceOf(FlywheelError);
    expect(error.name).toBe(name);
  });

  it('namespaces a short name once, and keeps a namespaced one', () => {
    expect(new FlywheelError('Custom', 'm').name).toBe('Flywheel.Custom');
    expect(new FlywheelError('Flywheel.Custom', 'm').name).toBe('Flywheel.Custom');
  });

  it('the sweep state machine retries a step that throws TransientError', () => {
    expect(LAMBDA_STEP_ERRORS).toContain(new TransientError('m').name);
  });
});
