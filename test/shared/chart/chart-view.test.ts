/**
 * ChartView in headless Chromium: the component, bundled for the browser, draws the builder's option as SVG in a
 * div with role="img" and its label (title, whole category names, series names, a 0 bar's "0%"), swaps it for a new
 * option, follows the div's width, and disposes its instance on unmount; a screenshot shows the bars' colours.
 */
import { build } from 'esbuild';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { CHART_PALETTE } from '../../../lib/shared/chart/chart-theme.ts';
import { expectClean, useBrowser } from '../../support/browser.ts';
import { countColor, rgb } from './support/chart-svg.ts';

const browser = useBrowser();

/**
 * The page script (TSX, bundled from here so the root project, which has no DOM or JSX, never type-checks it): mounts
 * a ChartView with an interval bar chart and lets the test swap the option, unmount it, and ask whether the div still
 * has an ECharts instance.
 */
const ENTRY = `import { render } from 'preact';
import { ChartView } from '../../../lib/console/web/components/chart-view.tsx';
import { buildIntervalBarChart } from '../../../lib/shared/chart/build-interval-bar-chart.ts';
import { buildLineChart } from '../../../lib/shared/chart/build-line-chart.ts';
import { echarts } from '../../../lib/shared/chart/echarts-setup.ts';

const bars = buildIntervalBarChart({
  title: 'Sweep nightly-1 · suite swe-mini',
  categories: ['coder-7b-instruct:step-100', 'coder-7b-instruct:step-200'],
  series: [
    { name: 'strict', values: [{ value: 0, low: 0, high: 0.1 }, { value: 0.4, low: 0.3, high: 0.5 }] },
    { name: 'lenient', values: [{ value: 0.2 }, { value: 0.6, low: 0.5, high: 0.7 }] },
  ],
  yAxis: { percent: true },
});
const line = buildLineChart({ title: 'run-1: loss', x: { type: 'value', name: 'step' }, y: {}, series: [{ name: 'loss', points: [[0, 2], [1, 1], [2, 0.5]] }] });

const root = document.getElementById('root')!;
let unmounted: HTMLElement | undefined;
const show = (option: typeof bars) => render(<ChartView option={option} height={400} label="sweep chart" />, root);
show(bars);
Object.assign(globalThis, {
  showLine: () => show(line),
  unmount: () => {
    unmounted = root.querySelector('[role="img"]') as HTMLElement;
    render(null, root);
  },
  disposed: () => unmounted !== undefined && echarts.getInstanceByDom(unmounted) === undefined,
  hasInstance: () => echarts.getInstanceByDom(root.querySelector('[role="img"]') as HTMLElement) !== undefined,
});
`;

async function bundle(): Promise<string> {
  const out = await build({
    stdin: { contents: ENTRY, resolveDir: import.meta.dirname, loader: 'tsx', sourcefile: 'chart-view-entry.tsx' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

describe('ChartView', () => {
  it('draws, swaps, resizes and disposes a chart in Chromium', async () => {
    const script = await bundle();
    const view = await browser.open(undefined, { viewport: { width: 1000, height: 700 } });
    const { page } = view;
    await page.setContent('<!doctype html><html><body style="margin:0"><div id="root"></div></body></html>');
    await page.addScriptTag({ content: script, type: 'module' });
    const chart = page.getByRole('img', { name: 'sweep chart' });
    await chart.locator('svg').waitFor();
    const texts = await chart.locator('svg text').allTextContents();
    expect(texts).toEqual(expect.arrayContaining(['Sweep nightly-1 · suite swe-mini', 'coder-7b-instruct:step-100', 'coder-7b-instruct:step-200', 'strict', 'lenient', '0%', '40%']));
    expect(await chart.evaluate((el) => el.getBoundingClientRect().height)).toBe(400);

    const shot = PNG.sync.read(await chart.screenshot());
    expect(countColor(shot, rgb(CHART_PALETTE[0]), 10)).toBeGreaterThan(500);
    expect(countColor(shot, rgb(CHART_PALETTE[1]), 10)).toBeGreaterThan(500);

    // The chart follows its div: a narrower window, a narrower SVG.
    await page.setViewportSize({ width: 600, height: 700 });
    await chart.locator('svg[width="600"]').waitFor();

    // A new option replaces the old whole.
    await page.evaluate(() => (globalThis as unknown as { showLine(): void }).showLine());
    await page.getByText('run-1: loss').waitFor();
    expect(await chart.locator('svg text').allTextContents()).not.toContain('strict');

    expect(await page.evaluate(() => (globalThis as unknown as { hasInstance(): boolean }).hasInstance())).toBe(true);
    await page.evaluate(() => (globalThis as unknown as { unmount(): void }).unmount());
    // Unmounted: the div is gone and its instance disposed (Preact may run effect cleanups after the render returns).
    await page.waitForFunction(() => (globalThis as unknown as { disposed(): boolean }).disposed());
    expect(await page.locator('[role="img"]').count()).toBe(0);
    expectClean(view);
  }, 40_000);
});
