/**
 * Text widths from a TrueType font's own tables (cmap format 4 and hmtx), so that ECharts, when it renders on the
 * server where there is no canvas to measure with, lays labels out for the font resvg will draw them in (DejaVu Sans
 * is wider than the guess ECharts makes otherwise, and a label it thinks fits would be cut at the edge).
 */

/** Advance widths of a font: `width(text, px)` in pixels. */
export interface FontMetrics {
  width(text: string, px: number): number;
}

/**
 * Read a TrueType font's advance widths.
 *
 * @example
 * const regular = fontMetrics(readFileSync('DejaVuSans.ttf'));
 * regular.width('coder-7b:step-200', 12); // ≈ 112
 */
export function fontMetrics(bytes: Uint8Array): FontMetrics {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tables = new Map<string, number>();
  const count = view.getUint16(4);
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    const tag = String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
    tables.set(tag, view.getUint32(at + 8));
  }
  const table = (tag: string) => {
    const at = tables.get(tag);
    if (at === undefined) throw new Error(`font has no ${tag} table`);
    return at;
  };
  const unitsPerEm = view.getUint16(table('head') + 18);
  const metricsCount = view.getUint16(table('hhea') + 34);
  const hmtx = table('hmtx');
  const advance = (glyph: number) => view.getUint16(hmtx + 4 * Math.min(glyph, metricsCount - 1));

  // cmap: the Windows Unicode BMP subtable (platform 3, encoding 1), format 4.
  const cmap = table('cmap');
  let sub = -1;
  for (let i = 0; i < view.getUint16(cmap + 2); i++) {
    const at = cmap + 4 + i * 8;
    if (view.getUint16(at) === 3 && view.getUint16(at + 2) === 1) sub = cmap + view.getUint32(at + 4);
  }
  if (sub < 0 || view.getUint16(sub) !== 4) throw new Error('font has no Unicode BMP cmap (format 4)');
  const segments = view.getUint16(sub + 6) / 2;
  const ends = sub + 14;
  const starts = ends + segments * 2 + 2;
  const deltas = starts + segments * 2;
  const offsets = deltas + segments * 2;
  const glyphOf = (code: number): number => {
    for (let s = 0; s < segments; s++) {
      if (view.getUint16(ends + s * 2) < code) continue;
      const start = view.getUint16(starts + s * 2);
      if (start > code) return 0;
      const delta = view.getInt16(deltas + s * 2);
      const offset = view.getUint16(offsets + s * 2);
      if (offset === 0) return (code + delta) & 0xffff;
      const g = view.getUint16(offsets + s * 2 + offset + (code - start) * 2);
      return g === 0 ? 0 : (g + delta) & 0xffff;
    }
    return 0;
  };
  const cache = new Map<number, number>();
  const units = (code: number) => {
    let w = cache.get(code);
    if (w === undefined) cache.set(code, (w = advance(glyphOf(code))));
    return w;
  };
  return {
    width(text: string, px: number): number {
      let total = 0;
      for (const ch of text) total += units(ch.codePointAt(0)!);
      return (total * px) / unitsPerEm;
    },
  };
}

/**
 * The pixel size and weight of a CSS font shorthand as ECharts writes it (`bold 16px DejaVu Sans, sans-serif`).
 *
 * @example
 * parseCssFont('bold 16px DejaVu Sans') // { px: 16, bold: true }
 */
export function parseCssFont(font: string | undefined): { px: number; bold: boolean } {
  const size = /(\d+(?:\.\d+)?)px/.exec(font ?? '');
  return { px: size ? Number(size[1]) : 12, bold: /\b(?:bold|bolder|[6-9]00)\b/.test(font ?? '') };
}
