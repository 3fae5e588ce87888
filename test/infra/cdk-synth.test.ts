import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/flywheel-function.ts';

const run = promisify(execFile);

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

  it('builds the Flywheel-prod stage of three stacks, the stateful one protected from termination', () => {
    const manifest = JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; displayName?: string; properties?: { stackName?: string; terminationProtection?: boolean } }>;
    };
    const stacks = Object.values(manifest.artifacts).filter((a) => a.type === 'aws:cloudformation:stack');
    expect(stacks.map((s) => s.properties?.stackName).sort()).toEqual(['Flywheel-prod-Api', 'Flywheel-prod-Data', 'Flywheel-prod-Pipeline']);
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
    expect(assetPaths).toHaveLength(4);
    for (const asset of assetPaths) {
      expect(asset).toBeDefined();
      // Asset paths are relative to the stage's nested assembly.
      const dir = join(assemblyDir, asset as string);
      expect(existsSync(join(dir, 'index.mjs')), dir).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map')), dir).toBe(true);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).toMatch(/export\s*\{/);
    }
  });

  it('cfn-lint passes over every template', async () => {
    const templates = readdirSync(assemblyDir)
      .filter((f) => f.endsWith('.template.json'))
      .map((f) => join(assemblyDir, f));
    expect(templates).toHaveLength(3);
    const result = await run('cfn-lint', ['--format', 'parseable', ...templates]).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 60_000);
});
