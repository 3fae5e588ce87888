/**
 * `flywheel experiment …` as a child process against the local runtime over real HTTP: create from a file, start, list
 * by status, assign, stop an arm (the control refused with the field named), status of one (arms, plan, ramp, stopped
 * arm, history). And the analysis tables (`formatAnalysis`) on an analysis that passes the
 * analysis schema: one row per arm with lift, both intervals, p, adjusted p, chance to win, verdict, the rule and SRM.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatAnalysis, formatExperimentStatus } from '../../lib/cli/experiment.ts';
import { ExperimentAnalysisSchema } from '../../lib/experiments/schemas.ts';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/wait-for.ts';
import { useLocalRuntime } from '../judges/support/http-runtime.ts';

const exec = promisify(execFile);
const { tempDir, start } = useLocalRuntime('flywheel-experiments-cli-');

describe('flywheel experiment', () => {
  it(
    'creates, starts, shows, lists, assigns and stops through the API',
    async () => {
      const rt = await start();
      for (const id of ['ckpt-a', 'ckpt-b']) {
        expect((await rt.call('POST', '/v1/checkpoints', { id, model: 'coder', serving: { kind: 'endpoint', model: 'openai:coder@http://127.0.0.1:9/v1' }, sweep: false })).status).toBe(201);
      }
      const cli = async (...args: string[]) => (await exec('npx', ['node', 'bin/flywheel.ts', 'experiment', ...args, '--data-dir', rt.dataDir], { cwd: process.cwd() })).stdout;
      const file = join(tempDir(), 'exp.json');
      writeFileSync(
        file,
        JSON.stringify({
          id: 'exp-cli',
          name: 'cli experiment',
          arms: [{ id: 'control', checkpoint: 'ckpt-a', control: true }, { id: 'b', checkpoint: 'ckpt-b' }],
          metrics: { primary: 'accepted', guardrails: [{ metric: 'latency_ms_per_turn' }] },
          plannedUnitsPerArm: 400,
          ramp: [{ percent: 10, minHours: 1 }, { percent: 100, minHours: 0 }],
        }),
      );

      expect((await cli('create', '--file', file)).trim()).toBe('exp-cli draft (400 units per arm planned)');
      expect((await cli('start', 'exp-cli')).trim()).toBe('exp-cli running');

      // `list` and `status` without an id print the same table.
      const all = (await cli('list', '--status', 'running')).trim().split('\n');
      expect(all[0]).toMatch(/^experiment\s+status\s+arms\s+primary\s+planned\/arm\s+ramp\s+created$/);
      expect(all[2]).toMatch(/^exp-cli\s+running\s+control,b\s+accepted\s+400\s+10%/);
      expect(all).toHaveLength(3);

      const assigned = (await cli('assign', '--unit', 'u-1', '--unit', 'u-2', '--unit', 'u-3')).trim().split('\n');
      expect(assigned[0]).toMatch(/^experiment\s+unit\s+arm\s+checkpoint\s+reason\s+log exposure$/);
      expect(assigned.slice(2).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual(['exp-cli u-1', 'exp-cli u-2', 'exp-cli u-3']);

      expect((await cli('stop', 'exp-cli', '--arm', 'b', '--reason', 'loops')).trim()).toBe('exp-cli arm b stopped');
      await expect(cli('stop', 'exp-cli', '--arm', 'control', '--reason', 'no')).rejects.toThrow(/Flywheel.ValidationError[\s\S]*arm: control is the control arm/);

      const one = await cli('status', 'exp-cli');
      expect(one).toContain('experiment exp-cli: cli experiment');
      expect(one).toMatch(/status\s+running/);
      expect(one).toMatch(/planned\s+400 units per arm/);
      expect(one).toMatch(/ramp\s+step 1\/2: 10% since 20/);
      expect(one).toMatch(/\nb\s+ckpt-b\s+1\s+person 20\S+: loops/);
      expect(one).toContain('last analysis: (none yet)');
      expect(one).toMatch(/2\s+\S+\s+arm-stopped\s+key:/);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('formatAnalysis', () => {
  const analysis = ExperimentAnalysisSchema.parse({
    analysisId: 'an-1',
    experimentId: 'exp-1',
    at: '2026-12-03T10:00:00Z',
    from: '2026-12-01T00:00:00Z',
    to: '2026-12-03T10:00:00Z',
    unitsPerArm: { control: 1200, b: 1180 },
    plannedUnitsPerArm: 2000,
    progress: 0.59,
    srm: { expectedShares: { control: 0.5, b: 0.5 }, observedUnits: { control: 1200, b: 1180 }, chiSquared: 0.168, pValue: 0.682, mismatch: false },
    metrics: [
      {
        metric: 'accepted',
        role: 'primary',
        kind: 'binomial',
        direction: 'increase',
        displayScale: 100,
        arms: [
          { arm: 'control', units: 1200, value: 0.3, se: 0.0132 },
          { arm: 'b', units: 1180, value: 0.33, se: 0.0137 },
        ],
        comparisons: [
          {
            arm: 'b',
            control: 'control',
            difference: 0.03,
            relativeLift: 0.1,
            ci: { low: -0.025, high: 0.225 },
            sequentialCi: { low: -0.08, high: 0.28 },
            pValue: 0.115,
            adjustedPValue: 0.23,
            chanceToWin: 0.943,
            cuped: { applied: false, varianceReduction: null, theta: null },
            verdict: 'inconclusive',
            rule: 'better or worse only when the interval excludes 0 with at least 100 units per arm',
          },
        ],
      },
    ],
    recommendation: { action: 'continue', because: 'the primary metric is inconclusive at 59% of the planned sample' },
    engine: 'duckdb',
    queryMs: 41,
  });

  it('prints a table per metric, the rule, the SRM line and the recommendation', () => {
    const text = formatAnalysis(analysis);
    const lines = text.split('\n');
    const header = lines.findIndex((l) => /^arm\s+units\s+value\s+lift\s+CI\s+sequential CI\s+p\s+adjusted p\s+chance to win\s+verdict$/.test(l));
    expect(header).toBeGreaterThan(0);
    expect(lines[header - 1]).toBe('accepted (primary, binomial, increase is better)');
    expect(lines[header + 2]).toMatch(/^control\s+1200\s+30\s+control$/);
    expect(lines[header + 3]).toMatch(/^b\s+1180\s+33\s+\+10\.00%\s+\[-2\.50%, \+22\.50%\]\s+\[-8\.00%, \+28\.00%\]\s+0\.1150\s+0\.2300\s+94\.3%\s+inconclusive$/);
    expect(text).toContain('  rule: better or worse only when the interval excludes 0 with at least 100 units per arm');
    expect(text).toContain('SRM: chi-squared 0.168, p 0.6820 (control 1200, b 1180): ok');
    expect(text).toContain('recommendation: continue: the primary metric is inconclusive at 59% of the planned sample');
  });

  it('shows units against the plan per arm and the recommendation in the status page', () => {
    const text = formatExperimentStatus(
      { experiment: { definition: { id: 'exp-1', name: 'n', arms: [{ id: 'control', checkpoint: 'a', weight: 1, control: true }, { id: 'b', checkpoint: 'b', weight: 1 }], ramp: [{ percent: 100 }] }, status: 'running', plannedUnitsPerArm: 2000, rampStep: 0, stoppedArms: [] }, changes: [] },
      analysis as unknown as Record<string, unknown>,
    );
    expect(text).toMatch(/\ncontrol\s+a\s+1\s+yes\s+1200\s+60\.0%/);
    expect(text).toMatch(/\nb\s+b\s+1\s+1180\s+59\.0%/);
    expect(text).toContain('last analysis an-1 at 2026-12-03T10:00:00Z: progress 59.0% of plan');
    expect(text).toContain('recommendation: continue');
  });
});
