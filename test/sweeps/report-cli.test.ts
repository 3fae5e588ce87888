import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../lib/api/routes.ts';
import { STAGES } from '../../lib/config/stages.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { createLocalServer, type LocalServer } from '../../lib/local/server.ts';
import { localSweepWorkflow } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW } from '../../lib/sweeps/workflow/sweep.asl.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { renderReportChart, reportChartOptions, reportChartSize, reportPanelSize } from '../../lib/sweeps/report-chart.ts';
import { CHART_PALETTE, MIN_BAR_PIXELS } from '../../lib/shared/chart/chart-theme.ts';
import { renderChartSvg } from '../../lib/shared/chart/render-chart.ts';
import { pixel, rgb, svgBars, svgTexts } from '../shared/chart/support/chart-svg.ts';
import { formatReportTable } from '../../lib/sweeps/report-table.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

const run = promisify(execFile);
let fx: SweepFixture;
let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  fx?.close();
});

const RATES: Record<string, number> = { 'ck-0': 0.2, 'ck-1': 0.5, 'ck-2': 0 };

async function sweptFixture(): Promise<SweepFixture> {
  const f = openSweepFixture();
  await f.seed({ checkpoints: 3, suites: 2, tasks: 20 });
  const steps = sweepStepHandlers({ settings: f.settings, notify: { log: () => {} } });
  await driveSweep(steps, f.ports, { sweepId: 'r1', trigger: 'manual', requestedAt: f.clock.now.toISOString() }, {
    script: rateScript((ck, suite, mode) => RATES[ck]! + (mode === 'lenient' ? 0.3 : 0) + (suite === 'suite-1' ? 0.1 : 0)),
  });
  return f;
}

describe('sweep report: chart and table', () => {
  it('draws a PNG that decodes: a panel per suite, strict beside lenient with intervals, whole names, a 0 visible', async () => {
    fx = await sweptFixture();
    const report = await getSweepReport(fx.ports, 'r1');
    const png = PNG.sync.read(await renderReportChart(report));
    const size = reportChartSize(report);
    expect([png.width, png.height]).toEqual([size.width, size.height]);
    const panel = reportPanelSize(report);
    expect(size.height).toBe(2 * panel.height);
    const options = reportChartOptions(report);
    expect(options).toHaveLength(2);
    for (const [i, option] of options.entries()) {
      // The panel as the PNG holds it (the same option, the same size, placed i panels down).
      const svg = renderChartSvg(option, panel);
      expect(svgTexts(svg)).toEqual(expect.arrayContaining([`Sweep r1 · suite suite-${i}`, 'ck-0', 'ck-1', 'ck-2', 'strict', 'lenient']));
      const bars = svgBars(svg);
      // 3 checkpoints × 2 modes, a 0 score included (a sliver).
      expect(bars).toHaveLength(6);
      for (const bar of bars) {
        expect(bar.fill).toBe(CHART_PALETTE[bar.series]);
        expect(bar.height).toBeGreaterThanOrEqual(MIN_BAR_PIXELS);
        if (bar.height > 8) expect(pixel(png, bar.x + 3, i * panel.height + bar.y + bar.height - 3), `suite-${i} ${bar.series}/${bar.index}`).toEqual(rgb(bar.fill));
      }
      // Strict (series 0) beside lenient (series 1), to its left; lenient scores higher here.
      const s = bars.find((b) => b.series === 0 && b.index === 1)!;
      const l = bars.find((b) => b.series === 1 && b.index === 1)!;
      expect(s.x + s.width).toBeLessThanOrEqual(l.x);
      expect(l.height).toBeGreaterThan(s.height);
    }
    // ck-2 strict on suite-0 scored 0: written as 0%, not left out.
    expect(svgTexts(renderChartSvg(options[0]!, panel))).toContain('0%');
    expect(pixel(png, png.width - 2, Math.floor(png.height / 2))).toEqual([255, 255, 255]);
  });

  it('prints a table of strict beside lenient with CIs', async () => {
    fx = await sweptFixture();
    const table = formatReportTable(await getSweepReport(fx.ports, 'r1'));
    const row = table.split('\n').find((l) => /^suite-0\s+ck-1\s/.test(l))!;
    // ck-1 on suite-0: strict 10/20, lenient 16/20 (Wilson intervals).
    expect(row).toMatch(/50\.0% \[29\.9–70\.1\] n=20\s+80\.0% \[58\.4–91\.9\] n=20/);
    expect(table).toContain('sweep r1: succeeded');
  });

  it('flywheel sweep report <id> over HTTP: the table on stdout, the PNG on disk; status too', async () => {
    fx = await sweptFixture();
    server = createLocalServer({ routes, ports: fx.ports, apiKeys: ['k'], throttle: STAGES.local.api });
    const url = await server.listen(0);
    const file = join(fx.dir, 'chart.png');
    const cli = (args: string[]) => run(process.execPath, ['bin/flywheel.ts', ...args, '--url', url, '--api-key', 'k'], { cwd: join(import.meta.dirname, '../..') });
    const { stdout, stderr } = await cli(['sweep', 'report', 'r1', '--png', file]);
    expect(stdout).toContain('sweep r1: succeeded');
    expect(stdout.split('\n').filter((l) => /^suite-\d\s+ck-\d/.test(l))).toHaveLength(6);
    expect(stderr).toContain(`chart: ${file}`);
    const png = PNG.sync.read(readFileSync(file));
    const size = reportChartSize(await getSweepReport(fx.ports, 'r1'));
    expect([png.width, png.height]).toEqual([size.width, size.height]);
    const status = await cli(['sweep', 'status', 'r1']);
    expect(status.stdout).toContain('shards: 12 planned, 12 succeeded, 0 failed');
    const missing = await cli(['sweep', 'status', 'nope']).catch((e: { code: number; stderr: string }) => e);
    expect((missing as { code: number }).code).toBe(1);
  });

  it('flywheel sweep start runs a sweep through the API and the workflows port; a bad selection exits 1 naming it', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 4, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 4 });
    const jobs = new LocalJobs({ dataDir: fx.dir, definitions: { rollout: { command: ['node', 'test/sweeps/support/scripted-rollout-job.ts'] } }, env: { ...process.env, FLYWHEEL_DATA_DIR: fx.dir }, pollMs: 50 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const wf = new LocalWorkflows(openDatabase(join(fx.dir, 'workflows.sqlite')), { [SWEEP_WORKFLOW]: localSweepWorkflow({ steps, ports: fx.ports, jobs, pollMs: 50 }) });
    fx.ports.workflows = wf;
    server = createLocalServer({ routes, ports: fx.ports, apiKeys: ['k'], throttle: STAGES.local.api });
    const url = await server.listen(0);
    const cli = (args: string[]) => run(process.execPath, ['bin/flywheel.ts', ...args, '--url', url, '--api-key', 'k'], { cwd: join(import.meta.dirname, '../..') });
    try {
      const started = await cli(['sweep', 'start', '--sweep-id', 'cli-1', '--suite', 'suite-0', '--mode', 'strict']);
      expect(started.stdout).toContain('sweep cli-1 started: 1 checkpoint(s) × 1 suite(s) × strict');
      const done = await wf.waitFor(LocalWorkflows.executionId(SWEEP_WORKFLOW, 'cli-1'), { timeoutMs: 60_000 });
      expect(done.status).toBe('SUCCEEDED');
      const status = await cli(['sweep', 'status', 'cli-1']);
      expect(status.stdout).toContain('sweep cli-1: succeeded (execution SUCCEEDED)');
      const bad = await cli(['sweep', 'start', '--suite', 'nope']).catch((e: { code: number; stderr: string }) => e);
      expect((bad as { code: number }).code).toBe(1);
      expect((bad as { stderr: string }).stderr).toContain('--suite: no suite nope is registered');
    } finally {
      await wf.close();
      await jobs.close();
    }
  });
});
