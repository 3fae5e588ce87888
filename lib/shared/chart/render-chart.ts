/**
 * Charts as files, on the server: ECharts renders an option (from the builders the console uses too) to an SVG
 * string server-side, and resvg (WebAssembly) turns that SVG into a PNG with the DejaVu Sans fonts, on white. The
 * WebAssembly is compiled once per process and the fonts read once; the result is the same bytes for the same option.
 *
 * Node only. The wasm and the fonts come from node_modules, or from the folder `FLYWHEEL_CHART_ASSETS` names (a Lambda
 * bundle: see `chart-assets.ts` and FlywheelFunction).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import type { EChartsOption } from 'echarts';
import { CHART_ASSETS_VARIABLE, CHART_FONTS, CHART_WASM, type ChartAsset } from './chart-assets.ts';
import { DEFAULT_CHART_SIZE } from './chart-theme.ts';
import { echarts } from './echarts-setup.ts';
import { fontMetrics, parseCssFont } from './font-metrics.ts';

export interface ChartSize {
  width: number;
  height: number;
}

/** Several charts in one picture: `columns` across, each drawn at `cell` size, rows as many as needed. */
export interface ChartGrid {
  columns: number;
  cell: ChartSize;
}

/** The error when the renderer's wasm or a font cannot be found. */
export const CHART_ASSET_MISSING = 'ChartAssetMissing';

function assetBytes(asset: ChartAsset): Buffer {
  const folder = process.env[CHART_ASSETS_VARIABLE];
  let path: string;
  try {
    path = folder ? join(folder, asset.name) : createRequire(import.meta.url).resolve(asset.specifier);
    return readFileSync(path);
  } catch (err) {
    const e = new Error(
      `chart renderer: cannot read ${asset.name} (${folder ? `${CHART_ASSETS_VARIABLE}=${folder}` : `from node_modules: ${asset.specifier}`}): ${(err as Error).message}`,
    );
    e.name = CHART_ASSET_MISSING;
    throw e;
  }
}

let fonts: Uint8Array[] | undefined;
let wasmReady: Promise<void> | undefined;

/** The font files, read once per process: regular first, then bold. */
function fontBuffers(): Uint8Array[] {
  fonts ??= CHART_FONTS.map((f) => new Uint8Array(assetBytes(f)));
  return fonts;
}

/** Compile the wasm, once per process (a failed start is retried by the next call). */
function renderer(): Promise<Uint8Array[]> {
  const buffers = fontBuffers();
  wasmReady ??= initWasm(assetBytes(CHART_WASM)).catch((err: unknown) => {
    wasmReady = undefined;
    throw err;
  });
  return wasmReady.then(() => buffers);
}

let measuring = false;

/** Make ECharts measure text with DejaVu Sans' own widths (there is no canvas on the server to ask). */
function measureWithDejaVu(): void {
  if (measuring) return;
  const [regular, bold] = fontBuffers().map((b) => fontMetrics(b));
  echarts.setPlatformAPI({
    measureText: (text: string, font?: string) => {
      const f = parseCssFont(font);
      return { width: (f.bold && bold ? bold : regular!).width(text, f.px) };
    },
  });
  measuring = true;
}

/**
 * The SVG of a chart, rendered server-side by ECharts.
 *
 * @example
 * const svg = renderChartSvg(buildLineChart({ title: 'loss', x: { type: 'value' }, y: {}, series }));
 */
export function renderChartSvg(option: EChartsOption, size: ChartSize = DEFAULT_CHART_SIZE): string {
  measureWithDejaVu();
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: size.width, height: size.height });
  try {
    chart.setOption(option);
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}

/**
 * A PNG of an SVG document (its own width and height), with the DejaVu fonts, on white.
 *
 * @example
 * const png = await renderSvgPng(renderChartSvg(option));
 */
export async function renderSvgPng(svg: string): Promise<Uint8Array> {
  const fontBuffers = await renderer();
  const resvg = new Resvg(svg, {
    background: '#ffffff',
    font: { fontBuffers, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  try {
    const image = resvg.render();
    try {
      return image.asPng();
    } finally {
      image.free();
    }
  } finally {
    resvg.free();
  }
}

/**
 * A chart as PNG bytes: the same picture the console draws from the same option.
 *
 * @example
 * await writeFile('chart.png', await renderChartPng(buildIntervalBarChart(input), { width: 900, height: 500 }));
 */
export async function renderChartPng(option: EChartsOption, size: ChartSize = DEFAULT_CHART_SIZE): Promise<Uint8Array> {
  return renderSvgPng(renderChartSvg(option, size));
}

/**
 * Several charts as one SVG, laid out in a grid (the sweep report's panel per suite, a run's panel per metric).
 *
 * @example
 * const svg = renderChartsSvg([a, b, c], { columns: 2, cell: { width: 450, height: 260 } });
 */
export function renderChartsSvg(options: readonly EChartsOption[], grid: ChartGrid): string {
  const columns = Math.max(1, Math.min(grid.columns, options.length));
  const rows = Math.max(1, Math.ceil(options.length / columns));
  const width = columns * grid.cell.width;
  const height = rows * grid.cell.height;
  const cells = options.map((option, i) => {
    const x = (i % columns) * grid.cell.width;
    const y = Math.floor(i / columns) * grid.cell.height;
    // Each chart's own <svg> root, placed by x and y inside the outer one.
    return renderChartSvg(option, grid.cell).replace(/^<svg /, `<svg x="${x}" y="${y}" `);
  });
  return `<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 ${width} ${height}"><rect width="${width}" height="${height}" fill="#ffffff"/>${cells.join('')}</svg>`;
}

/**
 * Several charts as one PNG (see renderChartsSvg).
 *
 * @example
 * await writeFile('curves.png', await renderChartsPng(options, { columns: 2, cell: { width: 450, height: 260 } }));
 */
export async function renderChartsPng(options: readonly EChartsOption[], grid: ChartGrid): Promise<Uint8Array> {
  return renderSvgPng(renderChartsSvg(options, grid));
}
