/**
 * The derivation's state machine definition: valid States Language, inside the two-runtime subset, and shaped as
 * documented (each judge's candidates in a Map iteration whose failure is recorded, the trainer as a Batch job).
 */
import aslValidator from 'asl-validator';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { aslSubsetViolations } from '../../lib/drivers/local/asl-subset.ts';
import { localDeriveArns } from '../../lib/judges/local/local-derive-judges.ts';
import { DERIVE_STEP_RETRY, TRAINER_JOB_ATTEMPTS, TRAINER_SUBMIT_RETRY } from '../../lib/judges/workflow/derive-retry-policies.ts';
import { worstCasePauseSeconds } from '../../lib/shared/asl.ts';
import { DERIVE_SHARE_IDENTIFIER, DERIVE_STATES, deriveJudgesDefinition, TRAINER_JOB_ENVIRONMENT } from '../../lib/judges/workflow/derive-judges.asl.ts';
import { BATCH_JOB_NAME_MAX, derivationIdOf, deriveSteps, dispatchDeriveStep, trainerJobName } from '../../lib/judges/workflow/derive-steps.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ErrorNames } from '../../lib/errors.ts';
import { DEFAULT_DERIVE_SETTINGS, defaultJudgeRunners, deriveSettingsFromEnv } from '../../lib/judges/derive/judge-runners.ts';
import { derivationKeys } from '../../lib/judges/derive/record-keys.ts';
import { MALFORMED_RECORD } from '../../lib/shared/record-codec.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const deployed = {
  stepFunction: 'arn:aws:lambda:eu-west-1:123456789012:function:Flywheel-dev-Workflows-DeriveStep',
  cpuJobQueue: 'arn:aws:batch:eu-west-1:123456789012:job-queue/flywheel-dev-cpu',
  trainerJobDefinition: 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-trainer:1',
};

describe('derive-judges definition', () => {
  it.each([
    ['local placeholders', deriveJudgesDefinition(localDeriveArns())],
    ['deployed-like ARNs', deriveJudgesDefinition(deployed)],
  ])('%s: valid (asl-validator), inside the subset, accepted by aws-local-stepfunctions', (_label, def) => {
    const result = aslValidator(structuredClone(def) as never, { checkPaths: true, checkArn: true });
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    expect(aslSubsetViolations(def)).toEqual([]);
    expect(() => new StateMachine(structuredClone(def) as never)).not.toThrow();
  });

  it('plans, derives each judge in a Map whose errors are recorded, then reports', () => {
    const def = deriveJudgesDefinition(localDeriveArns());
    expect(def.StartAt).toBe(DERIVE_STATES.plan);
    expect(def.States[DERIVE_STATES.plan]!.Next).toBe(DERIVE_STATES.map);
    expect(def.States[DERIVE_STATES.map]!.Next).toBe(DERIVE_STATES.report);
    const states = (def.States[DERIVE_STATES.map]!.ItemProcessor as { States: Record<string, Record<string, any>> }).States;
    const chain = [DERIVE_STATES.calibratePrompted, DERIVE_STATES.collectTeacher, DERIVE_STATES.train, DERIVE_STATES.calibrateDistilled, DERIVE_STATES.decide];
    chain.slice(0, -1).forEach((s, i) => expect(states[s]!.Next).toBe(chain[i + 1]));
    for (const s of chain) expect(states[s]!.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: DERIVE_STATES.failure }]);
    expect(states[DERIVE_STATES.train]).toMatchObject({
      Resource: 'arn:aws:states:::batch:submitJob.sync',
      Parameters: { JobQueue: localDeriveArns().cpuJobQueue, JobDefinition: localDeriveArns().trainerJobDefinition, ShareIdentifier: DERIVE_SHARE_IDENTIFIER },
    });
    const env = states[DERIVE_STATES.train]!.Parameters.ContainerOverrides.Environment as Array<{ Name: string }>;
    expect(env.map((e) => e.Name).sort()).toEqual(Object.keys(TRAINER_JOB_ENVIRONMENT).sort());
    expect(states[DERIVE_STATES.train]!.Retry[0]).toEqual({ ErrorEquals: ['Batch.ClientException'], MaxAttempts: 0 });
    // The job's name is the one collect-teacher made (`trainerJobName`), not a format of the raw judge name.
    expect(states[DERIVE_STATES.train]!.Parameters['JobName.$']).toBe('$.teacher.trainer.jobName');
    expect(states[DERIVE_STATES.collectTeacher]!.ResultSelector).toMatchObject({ 'trainer.$': '$.Payload.trainer' });
    // One retry layer: Batch's attempts; a failed job is not tried again by the state machine.
    const taskFailed = (states[DERIVE_STATES.train]!.Retry as Array<{ ErrorEquals: string[]; MaxAttempts?: number }>).filter((r) => r.ErrorEquals.includes('States.TaskFailed') || r.ErrorEquals.includes('States.ALL'));
    expect(taskFailed.every((r) => r.MaxAttempts === 0)).toBe(true);
  });

  it('spells out the worst-case pauses its retry policies document', () => {
    expect(worstCasePauseSeconds(DERIVE_STEP_RETRY)).toBe(35);
    expect(worstCasePauseSeconds(TRAINER_SUBMIT_RETRY)).toBe(135);
    // The trainer: 1 ASL try × TRAINER_JOB_ATTEMPTS Batch attempts = 2 runs at most (bad input: 1).
    expect(TRAINER_JOB_ATTEMPTS).toBe(2);
  });

  it('names one execution per checkpoint, a valid execution name', () => {
    const id = derivationIdOf('org/coder-7b:step-1200');
    expect(id).toMatch(/^derive-org-coder-7b-step-1200-[0-9a-f]{8}$/);
    expect(derivationIdOf('org/coder-7b:step-1200')).toBe(id);
    expect(derivationIdOf('org.coder-7b:step-1200')).not.toBe(id);
    expect(derivationIdOf('x'.repeat(200)).length).toBeLessThanOrEqual(80);
  });

  it('names the trainer job as Batch allows: [A-Za-z0-9_-], at most 128, one per derivation and judge', () => {
    const id = derivationIdOf('org/coder-7b:step-1200');
    const names = [trainerJobName(id, 'fm.judge'), trainerJobName(id, 'fm:judge'), trainerJobName(id, 'fm-judge'), trainerJobName(id, 'j'.repeat(300)), trainerJobName(id, `${'j'.repeat(300)}x`), trainerJobName(derivationIdOf('other'), 'fm.judge')];
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(name.length).toBeLessThanOrEqual(BATCH_JOB_NAME_MAX);
    }
    expect(new Set(names).size).toBe(names.length);
    expect(trainerJobName(id, 'fm.judge')).toBe(trainerJobName(id, 'fm.judge'));
    expect(trainerJobName(id, 'fm.judge')).toMatch(new RegExp(`^${id}-fm-judge-[0-9a-f]{8}$`));
  });
});

describe('derivation records and settings', () => {
  const tempDir = tempDirs('flywheel-derive-records-');

  it('a malformed derivation record fails where it is read, naming the field', async () => {
    const ports = openLocalPorts(tempDir());
    try {
      await ports.records.put({ ...derivationKeys.derivation('d1'), kind: 'derivation', derivationId: 'd1', checkpointId: 'c', judges: 'none', skipped: [], status: 'running', createdAt: 'x' });
      const stepPorts = { ...ports, settings: DEFAULT_DERIVE_SETTINGS, runners: defaultJudgeRunners(ports, DEFAULT_DERIVE_SETTINGS), notify: async () => undefined };
      await expect(deriveSteps['report-derivation'](stepPorts, { derivationId: 'd1' })).rejects.toMatchObject({ name: `Flywheel.${MALFORMED_RECORD}`, field: 'judges' });
      await expect(dispatchDeriveStep(stepPorts, { step: 'no-such-step', input: {} })).rejects.toMatchObject({ name: ErrorNames.validation });
    } finally {
      ports.close();
    }
  });

  it('reads prices from the environment and refuses malformed ones', () => {
    expect(deriveSettingsFromEnv({ FLYWHEEL_JUDGE_PRICING: '[{"prefix":"bedrock:","usdPerVerdict":0.002}]', FLYWHEEL_DERIVE_EPOCHS: '50' })).toMatchObject({ pricing: [{ prefix: 'bedrock:', usdPerVerdict: 0.002 }], epochs: 50 });
    expect(() => deriveSettingsFromEnv({ FLYWHEEL_JUDGE_PRICING: '{"prefix":1}' })).toThrow(expect.objectContaining({ name: ErrorNames.validation }));
  });
});
