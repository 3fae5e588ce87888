import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { ErrorNames, ValidationError } from '../../lib/errors.ts';
import type { IntegrityFlag } from '../../lib/harness/integrity/integrity-flag.ts';
import { getRewardSpec, parseRewardSpec, putRewardSpec, REWARD_RANGE, rewardOf, rewardSpecKeys, type RewardAttempt } from '../../lib/judges/reward-spec.ts';
import type { Judgement } from '../../lib/judges/schemas.ts';
import { MALFORMED_RECORD } from '../../lib/shared/record-codec.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('flywheel-reward-spec-');

const spec = parseRewardSpec({
  suite: 'behaviour-py',
  tests: 2,
  criteria: { 'asks-first': 1, 'stays-on-task': 1 },
  integrityPenalties: { 'test-file-edit': 0.5, 'skip-marker': 0.75, 'integrity-failure': 1 },
  judge: 'rubric-judge',
});

function judgement(verdicts: Record<string, 'pass' | 'fail' | 'not-applicable'>, options: { voided?: string; judge?: string } = {}): Judgement {
  return {
    judge: { name: options.judge ?? 'rubric-judge', version: 'abcdef012345' },
    criteria: Object.entries(verdicts).map(([id, verdict]) => ({
      id,
      verdict,
      ...(verdict === 'not-applicable' ? {} : { score: verdict === 'pass' ? 1 : 0 }),
      reason: 'r',
      evidence: [],
      ...(options.voided === id ? { voided: 'quote not in the attempt' } : {}),
    })),
    score: 0,
    calls: 1,
    usage: { promptTokens: 1, completionTokens: 1 },
    latencyMs: 1,
    complete: true,
  };
}

const flag = (kind: IntegrityFlag['kind']): IntegrityFlag => ({ kind, file: 'tests/test_x.py', line: 1, evidence: 'e', source: 'diff' });

describe('rewardOf', () => {
  it('is 1 when the tests pass and every criterion passes', () => {
    const r = rewardOf(spec, { grade: { passed: true }, judgement: judgement({ 'asks-first': 'pass', 'stays-on-task': 'pass' }) });
    expect(r).toMatchObject({ reward: 1, base: 1, penalty: 0, complete: true });
    expect(r.components.map((c) => [c.id, c.score])).toEqual([['tests', 1], ['criterion:asks-first', 1], ['criterion:stays-on-task', 1]]);
  });

  it('weights tests and criteria: passing tests with one failed criterion of weight 1 of 4 is 0.75', () => {
    const r = rewardOf(spec, { grade: { passed: true }, judgement: judgement({ 'asks-first': 'fail', 'stays-on-task': 'pass' }) });
    expect(r.reward).toBeCloseTo(0.75, 10);
  });

  it('subtracts each distinct flag kind once, caps the penalty at 1, and stays in the documented range', () => {
    const attempt: RewardAttempt = {
      grade: { passed: true, integrity: [flag('test-file-edit'), flag('test-file-edit'), flag('dependency-edit')] },
      judgement: judgement({ 'asks-first': 'pass', 'stays-on-task': 'pass' }),
    };
    const once = rewardOf(spec, attempt);
    expect(once.penalty).toBe(0.5);
    expect(once.penalties).toEqual([{ kind: 'test-file-edit', penalty: 0.5 }]);
    expect(once.reward).toBe(0.5);

    const worst = rewardOf(spec, { grade: { passed: false, integrity: [flag('test-file-edit'), flag('skip-marker')] }, integrityFailure: { reasons: ['x'] }, judgement: judgement({ 'asks-first': 'fail', 'stays-on-task': 'fail' }) });
    expect(worst.penalty).toBe(1);
    expect(worst.reward).toBe(REWARD_RANGE.min);
  });

  it('counts a voided verdict as 0, leaves a not-applicable criterion out, and marks a missing judgement incomplete', () => {
    const voided = rewardOf(spec, { grade: { passed: true }, judgement: judgement({ 'asks-first': 'pass', 'stays-on-task': 'pass' }, { voided: 'asks-first' }) });
    expect(voided.components.find((c) => c.id === 'criterion:asks-first')).toMatchObject({ score: 0, note: expect.stringContaining('voided') });
    expect(voided.reward).toBeCloseTo(0.75, 10);

    const na = rewardOf(spec, { grade: { passed: false }, judgement: judgement({ 'asks-first': 'not-applicable', 'stays-on-task': 'pass' }) });
    expect(na.reward).toBeCloseTo(1 / 3, 10);
    expect(na.complete).toBe(true);

    const unjudged = rewardOf(spec, { grade: { passed: true } });
    expect(unjudged).toMatchObject({ reward: 1, complete: false });
  });

  it('reads the judgement the harness stores on the grade', () => {
    const r = rewardOf(spec, { grade: { passed: true, judgement: judgement({ 'asks-first': 'fail', 'stays-on-task': 'pass' }) } });
    expect(r.reward).toBeCloseTo(0.75, 10);
    expect(r.complete).toBe(true);
  });

  it('ignores a judgement by another judge than the spec names', () => {
    const r = rewardOf(spec, { grade: { passed: false }, judgement: judgement({ 'asks-first': 'pass', 'stays-on-task': 'pass' }, { judge: 'someone-else' }) });
    expect(r.reward).toBe(0);
    expect(r.complete).toBe(false);
    expect(r.components[1]?.note).toContain('someone-else');
  });
});

describe('reward spec records', () => {
  it('refuses a bad spec naming the field', () => {
    const bad = (input: unknown) => {
      try {
        parseRewardSpec(input);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).name).toBe(ErrorNames.validation);
        return (error as ValidationError).issues.map((i) => i.path);
      }
      throw new Error('accepted');
    };
    expect(bad({ suite: 's', integrityPenalties: { 'not-a-flag': 1 } })).toContain('integrityPenalties.not-a-flag');
    expect(bad({ suite: 's', integrityPenalties: { 'exit-call': 2 } })).toContain('integrityPenalties.exit-call');
    expect(bad({ suite: 's', tests: 0 })).toEqual(['tests']);
    expect(bad({ tests: 1 })).toContain('suite');
  });

  it('stores one spec per suite through its codec, and a malformed record fails naming the field', async () => {
    const ports = openLocalPorts(tempDir());
    try {
      expect(await getRewardSpec(ports, 'behaviour-py')).toBeUndefined();
      await putRewardSpec(ports, spec, 'alice');
      const stored = await getRewardSpec(ports, 'behaviour-py');
      expect(stored).toMatchObject({ suite: 'behaviour-py', tests: 2, criteria: spec.criteria, updatedBy: 'alice', judge: 'rubric-judge' });
      await putRewardSpec(ports, parseRewardSpec({ suite: 'behaviour-py', tests: 1 }));
      expect((await getRewardSpec(ports, 'behaviour-py'))?.criteria).toEqual({});

      const key = rewardSpecKeys('broken');
      await ports.records.put({ ...key, kind: 'reward-spec', suite: 'broken', tests: 'heavy' });
      await expect(getRewardSpec(ports, 'broken')).rejects.toMatchObject({ name: `Flywheel.${MALFORMED_RECORD}`, field: 'tests' });
    } finally {
      ports.close();
    }
  });
});

describe('flywheel reward-spec', () => {
  const cli = (args: string[]) => spawnSync(process.execPath, ['bin/flywheel.ts', 'reward-spec', ...args], { encoding: 'utf8' });

  it('sets and shows a suite spec, and refuses a bad one naming the field', () => {
    const dataDir = tempDir();
    const set = cli(['set', 'behaviour-py', '--tests', '2', '--criterion', 'asks-first=1', '--penalty', 'test-file-edit=0.5', '--judge', 'rubric-judge', '--by', 'ana', '--data-dir', dataDir]);
    expect(set.status).toBe(0);
    expect(set.stdout).toContain('criterion asks-first: weight 1');
    const show = cli(['show', 'behaviour-py', '--json', '--data-dir', dataDir]);
    expect(show.status).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ suite: 'behaviour-py', tests: 2, criteria: { 'asks-first': 1 }, integrityPenalties: { 'test-file-edit': 0.5 }, updatedBy: 'ana' });
    const bad = cli(['set', 'behaviour-py', '--penalty', 'bogus=1', '--data-dir', dataDir]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('integrityPenalties.bogus');
    expect(cli(['show', 'nothing-here', '--data-dir', dataDir]).status).toBe(1);
  }, 60_000);
});
