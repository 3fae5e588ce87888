/**
 * The sweep report's chart: one panel per suite, one group per checkpoint, strict and lenient bars side by side, each
 * with its 95% CI as an error bar, on a 0–100% axis. Drawn pixel by pixel (`lib/shared/chart/raster.ts`, a 5 × 7
 * bitmap font) and encoded by `pngjs`: pure JavaScript, nothing native, nothing fetched at run time.
 *
 * `chartLayout` computes where everything goes; `renderReportChart` draws it. Tests check the PNG against the layout.
 */
import { textWidth } from '../shared/chart/bitmap-font.ts';
import { Raster, type Rgb } from '../shared/chart/raster.ts';
import type { SweepReport } from './schemas.ts';
import { HARNESS_MODES, type HarnessMode } from '../harness/task/harness-mode.ts';

export const CHART_COLORS = {
  background: [255, 255, 255] as Rgb,
  grid: [226, 226, 226] as Rgb,
  axis: [90, 90, 90] as Rgb,
  text: [30, 30, 30] as Rgb,
  strict: [31, 119, 180] as Rgb,
  lenient: [255, 127, 14] as Rgb,
  ci: [20, 20, 20] as Rgb,
} as const;

const M = { left: 56, right: 24, top: 46, panelGap: 20 };
const PLOT_HEIGHT = 180;
const PANEL_TITLE = 22;
const LABEL_BAND = 22;
const BAR = 22;
const PAIR_GAP = 4;
const GROUP_GAP = 30;
const MIN_WIDTH = 420;

export interface BarLayout {
  suite: string;
  checkpoint: string;
  mode: HarnessMode;
  score: number;
  x: number;
  width: number;
  /** Top and bottom pixel rows of the bar (top < bottom; equal for a 0 score). */
  top: number;
  bottom: number;
  color: Rgb;
  ci?: { x: number; low: number; high: number };
}

export interface ChartLayout {
  width: number;
  height: number;
  panels: Array<{ suite: string; plotTop: number; plotBottom: number; left: number; right: number }>;
  bars: BarLayout[];
}

export function chartLayout(report: SweepReport): ChartLayout {
  const checkpoints = report.sweep.checkpoints;
  const group = 2 * BAR + PAIR_GAP;
  const width = Math.max(MIN_WIDTH, M.left + M.right + checkpoints.length * group + (checkpoints.length + 1) * GROUP_GAP);
  const panelHeight = PANEL_TITLE + PLOT_HEIGHT + LABEL_BAND;
  const suites = report.sweep.suites.map((s) => s.id);
  const height = M.top + suites.length * panelHeight + (suites.length - 1) * M.panelGap + 10;
  const panels: ChartLayout['panels'] = [];
  const bars: BarLayout[] = [];
  suites.forEach((suite, si) => {
    const top = M.top + si * (panelHeight + M.panelGap);
    const plotTop = top + PANEL_TITLE;
    const plotBottom = plotTop + PLOT_HEIGHT;
    const left = M.left;
    const right = width - M.right;
    panels.push({ suite, plotTop, plotBottom, left, right });
    const y = (v: number) => Math.round(plotBottom - v * PLOT_HEIGHT);
    checkpoints.forEach((checkpoint, ci) => {
      const gx = left + GROUP_GAP + ci * (group + GROUP_GAP);
      HARNESS_MODES.forEach((mode, mi) => {
        const r = report.results.find((x) => x.suite === suite && x.checkpoint === checkpoint && x.mode === mode);
        if (!r || r.score === null) return;
        const x = gx + mi * (BAR + PAIR_GAP);
        bars.push({
          suite,
          checkpoint,
          mode,
          score: r.score,
          x,
          width: BAR,
          top: y(r.score),
          bottom: plotBottom,
          color: CHART_COLORS[mode],
          ...(r.ci ? { ci: { x: x + Math.floor(BAR / 2), low: y(r.ci.low), high: y(r.ci.high) } } : {}),
        });
      });
    });
  });
  return { width, height, panels, bars };
}

/**
 * @example
 * await writeFile('report.png', renderReportChart(await getSweepReport(ports, 'nightly-1')));
 */
export function renderReportChart(report: SweepReport): Buffer {
  const layout = chartLayout(report);
  const r = new Raster(layout.width, layout.height, CHART_COLORS.background);
  r.text(M.left, 8, `SWEEP ${report.sweep.sweepId}  SCORE PER CHECKPOINT, 95% CI`, CHART_COLORS.text, 1);
  // Legend.
  const lx = M.left;
  r.fillRect(lx, 24, 10, 10, CHART_COLORS.strict);
  r.text(lx + 14, 26, 'STRICT', CHART_COLORS.text);
  r.fillRect(lx + 64, 24, 10, 10, CHART_COLORS.lenient);
  r.text(lx + 78, 26, 'LENIENT', CHART_COLORS.text);
  for (const p of layout.panels) {
    r.text(p.left, p.plotTop - 16, `SUITE ${p.suite}`, CHART_COLORS.text);
    for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
      const y = Math.round(p.plotBottom - tick * PLOT_HEIGHT);
      if (tick > 0) r.hline(p.left + 1, p.right, y, CHART_COLORS.grid);
      const label = `${Math.round(tick * 100)}%`;
      r.text(p.left - 6 - textWidth(label), y - 3, label, CHART_COLORS.text);
    }
    r.vline(p.left, p.plotTop, p.plotBottom, CHART_COLORS.axis);
    r.hline(p.left, p.right, p.plotBottom, CHART_COLORS.axis);
  }
  for (const b of layout.bars) r.fillRect(b.x, b.top, b.width, Math.max(0, b.bottom - b.top), b.color);
  for (const b of layout.bars) {
    if (!b.ci) continue;
    r.vline(b.ci.x, b.ci.high, b.ci.low, CHART_COLORS.ci);
    r.hline(b.ci.x - 4, b.ci.x + 4, b.ci.high, CHART_COLORS.ci);
    r.hline(b.ci.x - 4, b.ci.x + 4, b.ci.low, CHART_COLORS.ci);
  }
  // Checkpoint labels under each group (cut to the group's width, keeping the end).
  const group = 2 * BAR + PAIR_GAP;
  const maxChars = Math.max(3, Math.floor((group + GROUP_GAP - 4) / 6));
  for (const p of layout.panels) {
    report.sweep.checkpoints.forEach((checkpoint, ci) => {
      const gx = p.left + GROUP_GAP + ci * (group + GROUP_GAP);
      // Ids of one model share their start (`coder-7b:step-…`): keep the end, which tells them apart.
      const label = checkpoint.length > maxChars ? `..${checkpoint.slice(checkpoint.length - (maxChars - 2))}` : checkpoint;
      r.text(gx + Math.round((group - textWidth(label)) / 2), p.plotBottom + 6, label, CHART_COLORS.text);
    });
  }
  return r.png();
}
