import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';
import { CHART_ASSETS, CHART_ASSETS_VARIABLE } from '../../lib/shared/chart/chart-assets.ts';

const run = promisify(execFile);

/** The stacks of one stage, as lib/stacks/flywheel-stage.ts composes them. */
const STACK_SUFFIXES = ['Api', 'Compute', 'Data', 'Pipeline', 'Workflows'];

/** Every Lambda entry under functions/ (a file that exports `handler`): each must be deployed and bundled once. */
function lambdaEntries(dir = join(PROJECT_ROOT, 'functions')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return lambdaEntries(path);
    return entry.name.endsWith('.ts') && /^export const handler\b/m.test(readFileSync(path, 'utf8')) ? [path] : [];
  });
}

/**
 * The real thing, once: `npx cdk synth -c stage=prod` as a child process, offline, bundling every function with the
 * local esbuild, into a temporary directory; then cfn-lint over what it wrote.
 */
describe('npx cdk synth -c stage=prod (real bundling)', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'flywheel-cdk-out-'));
  const assemblyDir = join(outdir, 'assembly-Flywheel-prod');

  beforeAll(async () => {
    await run('npx', ['cdk', 'synth', '--quiet', '--no-notices', '-o', outdir, '-c', 'stage=prod'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      timeout: 110_000,
    });
  }, 120_000);
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('builds the Flywheel-prod stage of its stacks, the stateful one protected from termination', () => {
    const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; displayName?: string; properties?: { stackName?: string; terminationProtection?: boolean } }>;
    };
    const stacks = Object.values(manifest.artifacts).filter((a) => a.type === 'aws:cloudformation:stack');
    expect(stacks.map((s) => s.properties?.stackName).sort()).toEqual(STACK_SUFFIXES.map((s) => `Flywheel-prod-${s}`));
    const data = stacks.find((s) => s.properties?.stackName === 'Flywheel-prod-Data');
    expect(data?.properties?.terminationProtection).toBe(true);
  });

  it('bundles each function as ESM with a source map', () => {
    const templates = readdirSync(assemblyDir).filter((f) => f.endsWith('.template.json'));
    const assetPaths = templates.flatMap((t) => {
      const template = JSON.parse(readFileSync(join(assemblyDir, t), 'utf8')) as {
        Resources: Record<string, { Type: string; Metadata?: Record<string, string> }>;
      };
      return Object.values(template.Resources)
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .map((r) => r.Metadata?.['aws:asset:path']);
    });
    expect(assetPaths).toHaveLength(lambdaEntries().length);
    for (const asset of assetPaths) {
      expect(asset).toBeDefined();
      // Asset paths are relative to the stage's nested assembly.
      const dir = join(assemblyDir, asset as string);
      expect(existsSync(join(dir, 'index.mjs')), dir).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map')), dir).toBe(true);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(/export\s*\{/);
    }
  });

  it('ships the labelled set beside every failure-mode function, which trains the default classifier from it', () => {
    const modesFunctions = readdirSync(assemblyDir)
      .filter((f) => f.endsWith('.template.json'))
      .flatMap((t) => {
        const template = JSON.parse(readFileSync(join(assemblyDir, t), 'utf8')) as {
          Resources: Record<string, { Type: string; Metadata?: Record<string, string>; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
        };
        return Object.values(template.Resources).filter(
          (r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'flywheel-modes',
        );
      });
    expect(modesFunctions.length).toBeGreaterThanOrEqual(2);
    for (const fn of modesFunctions) {
      expect(fn.Properties?.Environment?.Variables?.FLYWHEEL_MODES_LABELLED_SET).toBe('/var/task/labelled.jsonl');
      const shipped = join(assemblyDir, fn.Metadata?.['aws:asset:path'] as string, 'labelled.jsonl');
      expect(readFileSync(shipped, 'utf8')).toBe(readFileSync(join(PROJECT_ROOT, 'data/modes/labelled.jsonl'), 'utf8'));
    }
  });

  it('ships the chart renderer (resvg wasm, DejaVu fonts) beside every function that renders PNG charts', () => {
    const chartFunctions = readdirSync(assemblyDir)
      .filter((f) => f.endsWith('.template.json'))
      .flatMap((t) => {
        const template = JSON.parse(readFileSync(join(assemblyDir, t), 'utf8')) as {
          Resources: Record<string, { Type: string; Metadata?: Record<string, string>; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
        };
        return Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Environment?.Variables?.[CHART_ASSETS_VARIABLE] !== undefined);
      });
    // training/api (curves), experiments/api and experiments/schedule (lift charts), people/slack-worker (compare).
    expect(chartFunctions.length).toBeGreaterThanOrEqual(4);
    for (const fn of chartFunctions) {
      expect(fn.Properties?.Environment?.Variables?.[CHART_ASSETS_VARIABLE]).toBe('/var/task');
      const dir = join(assemblyDir, fn.Metadata?.['aws:asset:path'] as string);
      for (const asset of CHART_ASSETS) expect(readFileSync(join(dir, asset.name)).equals(readFileSync(join(PROJECT_ROOT, asset.source))), asset.name).toBe(true);
    }
  });

  it('cfn-lint passes over every template', async () => {
    const templates = readdirSync(assemblyDir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => join(assemblyDir, f));
    expect(templates).toHaveLength(STACK_SUFFIXES.length);
    const result = await run('cfn-lint', ['--format', 'parseable', ...templates]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 60_000);
});
