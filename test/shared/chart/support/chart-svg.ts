/**
 * Reading what the chart renderer wrote: the text of an ECharts SVG (entities decoded), its bars (the rectangles
 * ECharts tags with their series and data index), and the pixels of a PNG (decoded by pngjs).
 */
import { PNG } from 'pngjs';

/** Every <text> element's content, entities decoded. */
export function svgTexts(svg: string): string[] {
  return [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) =>
    m[1]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&'),
  );
}

export interface SvgBar {
  series: number;
  index: number;
  fill: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The bars of a bar series: ECharts writes each as `M x y l w 0 l 0 h l -w 0 Z` tagged with its indexes. */
export function svgBars(svg: string): SvgBar[] {
  const bars: SvgBar[] = [];
  for (const m of svg.matchAll(/<path d="M(-?[\d.]+) (-?[\d.]+)l(-?[\d.]+) 0l0 (-?[\d.]+)l-?[\d.]+ 0Z" fill="([^"]+)" ecmeta_series_index="(\d+)" ecmeta_data_index="(\d+)" ecmeta_ssr_type="chart"/g)) {
    const [x, y, w, h] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    bars.push({ series: Number(m[6]), index: Number(m[7]), fill: m[5]!, x: Math.min(x, x + w), y: Math.min(y, y + h), width: Math.abs(w), height: Math.abs(h) });
  }
  return bars;
}

/** The [r, g, b] of a `#rrggbb` colour. */
export function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export function decodePng(bytes: Uint8Array): PNG {
  return PNG.sync.read(Buffer.from(bytes));
}

export function pixel(png: PNG, x: number, y: number): [number, number, number] {
  const i = (Math.round(y) * png.width + Math.round(x)) * 4;
  return [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
}

/** How many pixels of a colour (within `tolerance` per channel) a PNG holds. */
export function countColor(png: PNG, color: [number, number, number], tolerance = 0): number {
  let n = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    if (Math.abs(png.data[i]! - color[0]) <= tolerance && Math.abs(png.data[i + 1]! - color[1]) <= tolerance && Math.abs(png.data[i + 2]! - color[2]) <= tolerance) n++;
  }
  return n;
}
