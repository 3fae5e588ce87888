/**
 * Every error class carries the name its constant spells, so a state machine's ErrorEquals, a log query and an
 * `instanceof` in code agree on what was thrown.
 */
import { describe, expect, it } from 'vitest';
import {
  HttpErrorNames,
  MalformedJsonError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  RouteNotFoundError,
  ThrottledError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../../lib/api/http-errors.ts';
import { AuthErrorNames, ForbiddenError } from '../../lib/auth/forbidden-error.ts';
import { AwsDriverErrorNames, EventPublishError, QueueSendError, ResumeLimitExceededError } from '../../lib/drivers/aws/aws-driver-errors.ts';
import { MALFORMED_ROW, MalformedRowError } from '../../lib/drivers/local/sqlite-rows.ts';
import { ConfigurationError, ConflictError, ErrorNames, FlywheelError, NotFoundError, TransientError, ValidationError } from '../../lib/errors.ts';
import { FeedbackErrorNames, TrainingConsentRequiredError } from '../../lib/feedback/training-trajectory.ts';
import { BaselineError, ForgeErrorNames } from '../../lib/forge/run-baseline.ts';
import { ENVIRONMENT_BUILD_ERROR, EnvironmentBuildError } from '../../lib/harness/environment/environment-errors.ts';
import { GradingErrorNames, GradingSetupError } from '../../lib/harness/grading/grading-setup-error.ts';
import { SandboxCgroupError } from '../../lib/harness/sandbox/attempt-cgroup.ts';
import { SandboxClosedError, SandboxDiffError, SandboxErrorNames, SandboxExecError, SandboxSetupError } from '../../lib/harness/sandbox/sandbox-errors.ts';
import { TaskErrorNames, UnsafeTarballError } from '../../lib/harness/task/extract-tarball.ts';
import { TaskSourceError } from '../../lib/harness/task/prepare-task-source.ts';
import { parseTask } from '../../lib/harness/task/task-schema.ts';
import { ModelErrorNames, ModelRequestError, ModelUnavailableError } from '../../lib/models/model-errors.ts';
import { TrainingDataError } from '../../lib/modes/classifier/local-classifier.ts';
import { ModesErrorNames } from '../../lib/modes/modes-errors.ts';
import { ModelNotConfiguredError } from '../../lib/modes/modes-models.ts';
import { TaxonomyConflictError } from '../../lib/modes/taxonomy/taxonomy-store.ts';
import { JobNotFoundError } from '../../lib/ports/job-errors.ts';
import { JOB_NOT_FOUND } from '../../lib/ports/jobs.ts';
import { ExecutionAlreadyExistsError, ExecutionNotFoundError, WorkflowErrorNames } from '../../lib/ports/workflow-errors.ts';
import { SuiteVersionConflictError } from '../../lib/registry/retire-suite.ts';
import { MALFORMED_RECORD, MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { LAMBDA_STEP_ERRORS } from '../../lib/sweeps/workflow/retry-policies.ts';

const task = parseTask({ schemaVersion: 1, id: 't-1', suite: 's', split: 'train', visibility: 'public', repo: { kind: 'git', url: 'https://example.com/r.git', commit: 'a'.repeat(40) }, instruction: 'fix it', testCommand: 'true', failToPass: ['a'] });

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
    [new SandboxCgroupError('m'), SandboxErrorNames.cgroup],
    [new QueueSendError('m'), AwsDriverErrorNames.queueSend],
    [new EventPublishError('m'), AwsDriverErrorNames.eventPublish],
    [new ResumeLimitExceededError('m'), AwsDriverErrorNames.resumeLimitExceeded],
    [new JobNotFoundError('j-1'), `Flywheel.${JOB_NOT_FOUND}`],
    [new ExecutionAlreadyExistsError('m'), WorkflowErrorNames.executionAlreadyExists],
    [new ExecutionNotFoundError('x-1'), WorkflowErrorNames.executionNotFound],
    [new ModelUnavailableError('m', 6), ModelErrorNames.unavailable],
    [new ModelRequestError('m', 400), ModelErrorNames.request],
    [new MalformedRecordError('vote', 'pk', 'sk', 'rating', 'm'), `Flywheel.${MALFORMED_RECORD}`],
    [new MalformedRowError('jobs', 'status', 'm'), `Flywheel.${MALFORMED_ROW}`],
    [new EnvironmentBuildError('m'), `Flywheel.${ENVIRONMENT_BUILD_ERROR}`],
    [new GradingSetupError('m'), GradingErrorNames.setup],
    [new UnsafeTarballError('unsafe', 'm'), TaskErrorNames.unsafeTarball],
    [new BaselineError('m'), ForgeErrorNames.baseline],
    [new TrainingConsentRequiredError('e-1'), FeedbackErrorNames.trainingConsentRequired],
    [new ModelNotConfiguredError('clustering', 'FLYWHEEL_EMBEDDING_MODEL'), ModesErrorNames.modelNotConfigured],
    [new TrainingDataError('m'), ModesErrorNames.trainingData],
    [new ForbiddenError(), AuthErrorNames.forbidden],
    [new PayloadTooLargeError(2, 1), HttpErrorNames.payloadTooLarge],
    [new UnsupportedMediaTypeError('text/plain'), HttpErrorNames.unsupportedMediaType],
    [new MalformedJsonError('m'), HttpErrorNames.malformedJson],
    [new RouteNotFoundError('GET', '/x'), HttpErrorNames.routeNotFound],
    [new MethodNotAllowedError('PUT', '/x', ['GET']), HttpErrorNames.methodNotAllowed],
    [new UnauthorizedError(), HttpErrorNames.unauthorized],
    [new ThrottledError(1), HttpErrorNames.throttled],
    // Subclasses of a general error keep its name: the HTTP status map and a state machine treat them as that error.
    [new TaskSourceError(task, 'repo.url', 'm'), ErrorNames.validation],
    [new SuiteVersionConflictError('s', 1), ErrorNames.conflict],
    [new TaxonomyConflictError(2), ErrorNames.conflict],
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
