/**
 * The PNG renderer works inside a Lambda bundle: an entry that renders a chart is bundled by esbuild with the settings
 * FlywheelFunction uses, the chart assets are copied beside it by FlywheelFunction's own afterBundling commands, and
 * the bundle, run by node from a folder with no node_modules, writes a PNG that decodes. Without FLYWHEEL_CHART_ASSETS
 * it fails naming the missing file, so it is that variable (not a stray node_modules) that makes it work.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { chartAssetCommands, FUNCTION_BUNDLING, PROJECT_ROOT } from '../../../lib/constructs/flywheel-function.ts';
import { CHART_ASSET_MISSING } from '../../../lib/shared/chart/render-chart.ts';
import { CHART_ASSETS, CHART_ASSETS_VARIABLE } from '../../../lib/shared/chart/chart-assets.ts';
import { tempDirs } from '../../support/temp-dirs.ts';
import { decodePng, pixel } from './support/chart-svg.ts';

const run = promisify(execFile);
const tempDir = tempDirs('flywheel-chart-bundle-');

describe('chart rendering in a Lambda bundle', () => {
  it('bundles, ships the wasm and fonts beside the handler, and renders a PNG from a folder without node_modules', async () => {
    const dir = tempDir();
    await build({
      entryPoints: [join(import.meta.dirname, 'fixtures/render-png-entry.ts')],
      outfile: join(dir, 'index.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: FUNCTION_BUNDLING.target,
      mainFields: [...FUNCTION_BUNDLING.mainFields],
      minify: FUNCTION_BUNDLING.minify,
      banner: { js: FUNCTION_BUNDLING.banner },
      logLevel: 'silent',
    });
    for (const command of chartAssetCommands(PROJECT_ROOT.replace(/\/$/, ''), dir)) await run('sh', ['-c', command]);
    expect(readdirSync(dir).sort()).toEqual(['index.mjs', ...CHART_ASSETS.map((a) => a.name)].sort());

    const out = join(dir, 'chart.png');
    await run(process.execPath, ['index.mjs', out], { cwd: dir, env: { PATH: process.env.PATH, [CHART_ASSETS_VARIABLE]: dir } });
    const png = decodePng(readFileSync(out));
    expect([png.width, png.height]).toEqual([640, 360]);
    let painted = 0;
    for (let y = 0; y < png.height; y += 2) for (let x = 0; x < png.width; x += 2) if (pixel(png, x, y).join() === '25,113,194') painted++;
    expect(painted).toBeGreaterThan(200);

    const without = await run(process.execPath, ['index.mjs', join(dir, 'no.png')], { cwd: dir, env: { PATH: process.env.PATH } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(without.code).not.toBe(0);
    expect(without.stderr).toContain(CHART_ASSET_MISSING);
  }, 60_000);
});
