/**
 * `npm run bench:charts`: what a chart costs to render on the server, per builder, at 900 × 500: ECharts' server-side
 * SVG and resvg's PNG timed separately (median and p95 over --runs renders, after --warmup), and the cold first render
 * (a fresh Node process: import, wasm compile, font load, first SVG, first PNG). The baseline, measured in the same
 * run: resvg rendering a trivial SVG of the same size (a white page with one line of text), so the figures read as
 * "times the floor" on a shared, noisy machine.
 *
 * Flags: --runs 30  --warmup 5  --json <file>
 *
 * @example
 * npm run bench:charts
 * npm run bench:charts -- --runs 60 --json charts.json
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import type { EChartsOption } from 'echarts';
import { buildIntervalBarChart } from '../lib/shared/chart/build-interval-bar-chart.ts';
import { buildLiftChart } from '../lib/shared/chart/build-lift-chart.ts';
import { buildLineChart } from '../lib/shared/chart/build-line-chart.ts';
import { buildStackedBarChart } from '../lib/shared/chart/build-stacked-bar-chart.ts';
import { renderChartPng, renderChartSvg, renderSvgPng } from '../lib/shared/chart/render-chart.ts';

const SIZE = { width: 900, height: 500 };

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '5' },
    json: { type: 'string' },
    cold: { type: 'string' },
  },
});

/** The charts people see most, with realistic sizes: a sweep panel, a run's loss curve, a lift plot, compute. */
function charts(): Record<string, EChartsOption> {
  const checkpoints = Array.from({ length: 6 }, (_, i) => `coder-7b-instruct:step-${(i + 1) * 200}`);
  const score = (i: number, m: number) => ({ value: Math.min(1, i * 0.12 + m), low: Math.max(0, i * 0.12 + m - 0.08), high: Math.min(1, i * 0.12 + m + 0.08) });
  return {
    'interval bars (6 checkpoints × 2 modes)': buildIntervalBarChart({
      title: 'Sweep nightly-1 · suite swe-mini',
      subtitle: 'score per checkpoint, strict beside lenient, 95% interval',
      categories: checkpoints,
      series: [
        { name: 'strict', values: checkpoints.map((_, i) => score(i, 0)) },
        { name: 'lenient', values: checkpoints.map((_, i) => score(i, 0.2)) },
      ],
      yAxis: { name: 'score', percent: true },
    }),
    'line (2 runs × 2,000 steps, a band)': buildLineChart({
      title: 'run-a against run-b: loss',
      x: { name: 'step', type: 'value' },
      y: { name: 'loss' },
      series: [
        { name: 'run-a', points: Array.from({ length: 2000 }, (_, i): [number, number] => [i, 2 / (1 + i / 50) + 0.05 * Math.sin(i / 7)]) },
        {
          name: 'run-b',
          points: Array.from({ length: 2000 }, (_, i): [number, number] => [i, 1.8 / (1 + i / 60)]),
          band: Array.from({ length: 200 }, (_, k): [number, number, number] => [k * 10, 1.8 / (1 + (k * 10) / 60) - 0.1, 1.8 / (1 + (k * 10) / 60) + 0.1]),
        },
      ],
    }),
    'lift (8 rows)': buildLiftChart({
      title: 'exp-1: relative lift',
      subtitle: 'latest analysis, always-valid interval',
      percent: true,
      rows: Array.from({ length: 8 }, (_, i) => ({ label: `metric-${i} (treatment)`, estimate: (i - 4) / 40, low: (i - 6) / 40, high: (i - 2) / 40, verdict: i < 2 ? ('worse' as const) : i > 5 ? ('better' as const) : ('flat' as const) })),
    }),
    'stacked bars (5 categories × 3)': buildStackedBarChart({
      title: 'Compute by category',
      categories: ['training', 'evaluation', 'judging', 'classification', 'experiments'],
      series: ['GPU-hours', 'CPU-hours', 'other'].map((name, s) => ({ name, values: [12.5, 3, 0, 1, 0.4].map((v) => v / (s + 1)) })),
      yAxis: { name: 'hours' },
    }),
  };
}

const TRIVIAL_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE.width}" height="${SIZE.height}"><rect width="100%" height="100%" fill="#fff"/><text x="20" y="40" font-family="DejaVu Sans" font-size="16">baseline</text></svg>`;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

async function time(fn: () => unknown | Promise<unknown>, runs: number, warmup: number): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { median: quantile(ms, 0.5), p95: quantile(ms, 0.95) };
}

/** In a fresh process: the first render of one chart, from the imports on. */
async function coldChild(name: string): Promise<void> {
  const t0 = performance.now();
  const option = charts()[name]!;
  const svg = renderChartSvg(option, SIZE);
  const t1 = performance.now();
  await renderSvgPng(svg);
  const t2 = performance.now();
  process.stdout.write(JSON.stringify({ svg: t1 - t0, png: t2 - t1 }));
}

const f1 = (v: number) => v.toFixed(1);

async function main(): Promise<void> {
  const runs = Number(flags.runs);
  const warmup = Number(flags.warmup);
  // The process start itself (imports included) is measured from outside.
  const coldOf = (name: string) => {
    const t = performance.now();
    const out = execFileSync(process.execPath, [import.meta.filename, '--cold', name], { encoding: 'utf8' });
    return { ...(JSON.parse(out) as { svg: number; png: number }), process: performance.now() - t };
  };
  const baseline = await time(() => renderSvgPng(TRIVIAL_SVG), runs, warmup);
  const rows: Array<{ chart: string; svg: { median: number; p95: number }; png: { median: number; p95: number }; total: { median: number; p95: number }; cold: { svg: number; png: number; process: number }; bytes: number }> = [];
  for (const [name, option] of Object.entries(charts())) {
    const svg = renderChartSvg(option, SIZE);
    rows.push({
      chart: name,
      svg: await time(() => renderChartSvg(option, SIZE), runs, warmup),
      png: await time(() => renderSvgPng(svg), runs, warmup),
      total: await time(() => renderChartPng(option, SIZE), runs, warmup),
      cold: coldOf(name),
      bytes: (await renderChartPng(option, SIZE)).length,
    });
  }
  const header = ['chart', 'SVG p50', 'SVG p95', 'PNG p50', 'PNG p95', 'both p50', 'both p95', '× floor', 'cold SVG', 'cold PNG', 'cold process', 'PNG KB'];
  const table = [
    header,
    ...rows.map((r) => [r.chart, f1(r.svg.median), f1(r.svg.p95), f1(r.png.median), f1(r.png.p95), f1(r.total.median), f1(r.total.p95), (r.total.median / baseline.median).toFixed(1), f1(r.cold.svg), f1(r.cold.png), f1(r.cold.process), (r.bytes / 1024).toFixed(0)]),
    ['floor: resvg, trivial SVG', '', '', f1(baseline.median), f1(baseline.p95), f1(baseline.median), f1(baseline.p95), '1.0', '', '', '', ''],
  ];
  const widths = header.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  process.stdout.write(`chart render at ${SIZE.width}×${SIZE.height}, ms; ${runs} runs after ${warmup} warm-up; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})\n`);
  for (const row of table) process.stdout.write(`${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')}\n`);
  if (flags.json) writeFileSync(flags.json, JSON.stringify({ size: SIZE, runs, warmup, baseline, rows }, null, 2));
}

if (flags.cold) await coldChild(flags.cold);
else await main();
