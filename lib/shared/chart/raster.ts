/**
 * An RGBA pixel buffer with the few drawing operations a chart needs (filled rectangles, lines, bitmap text), encoded
 * to PNG by `pngjs` (pure JavaScript, no native addon). Shared: the sweep report's bars, a training run's curves.
 */
import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_SPACING, GLYPH_WIDTH, glyph } from './bitmap-font.ts';

export type Rgb = readonly [number, number, number];

export class Raster {
  readonly width: number;
  readonly height: number;
  readonly data: Buffer;

  constructor(width: number, height: number, background: Rgb) {
    this.width = width;
    this.height = height;
    this.data = Buffer.alloc(width * height * 4);
    this.fillRect(0, 0, width, height, background);
  }

  setPixel(x: number, y: number, c: Rgb): void {
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (Math.floor(y) * this.width + Math.floor(x)) * 4;
    this.data[i] = c[0];
    this.data[i + 1] = c[1];
    this.data[i + 2] = c[2];
    this.data[i + 3] = 255;
  }

  /** Fills [x, x + w) × [y, y + h), clipped to the image. */
  fillRect(x: number, y: number, w: number, h: number, c: Rgb): void {
    const x0 = Math.max(0, Math.round(x));
    const y0 = Math.max(0, Math.round(y));
    const x1 = Math.min(this.width, Math.round(x + w));
    const y1 = Math.min(this.height, Math.round(y + h));
    for (let yy = y0; yy < y1; yy++) for (let xx = x0; xx < x1; xx++) this.setPixel(xx, yy, c);
  }

  hline(x0: number, x1: number, y: number, c: Rgb, thickness = 1): void {
    this.fillRect(Math.min(x0, x1), y, Math.abs(x1 - x0) + 1, thickness, c);
  }

  vline(x: number, y0: number, y1: number, c: Rgb, thickness = 1): void {
    this.fillRect(x, Math.min(y0, y1), thickness, Math.abs(y1 - y0) + 1, c);
  }

  /** A straight line from (x0, y0) to (x1, y1), `thickness` pixels square per point (Bresenham). */
  line(x0: number, y0: number, x1: number, y1: number, c: Rgb, thickness = 1): void {
    let x = Math.round(x0);
    let y = Math.round(y0);
    const xe = Math.round(x1);
    const ye = Math.round(y1);
    const dx = Math.abs(xe - x);
    const dy = -Math.abs(ye - y);
    const sx = x < xe ? 1 : -1;
    const sy = y < ye ? 1 : -1;
    let err = dx + dy;
    for (;;) {
      this.fillRect(x, y, thickness, thickness, c);
      if (x === xe && y === ye) return;
      const e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y += sy;
      }
    }
  }

  /** Draws `text` with its top-left corner at (x, y). */
  text(x: number, y: number, text: string, c: Rgb, scale = 1): void {
    let cx = x;
    for (const ch of text) {
      const rows = glyph(ch);
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        for (let col = 0; col < GLYPH_WIDTH; col++) {
          if (rows[row]! & (1 << (GLYPH_WIDTH - 1 - col))) this.fillRect(cx + col * scale, y + row * scale, scale, scale, c);
        }
      }
      cx += (GLYPH_WIDTH + GLYPH_SPACING) * scale;
    }
  }

  png(): Buffer {
    const png = new PNG({ width: this.width, height: this.height });
    this.data.copy(png.data);
    return PNG.sync.write(png);
  }
}
