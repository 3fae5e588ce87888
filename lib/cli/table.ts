/**
 * The CLI's plain aligned text table, shared by every command that lists rows. It fits the terminal: when the
 * columns are wider than the terminal (`tableWidth`: its columns, 100 when it reports none), the widest columns are
 * narrowed and their cells wrap onto more lines, at spaces first (an id stays whole while the text beside it can
 * wrap), so nothing is cut off; a cell's own line breaks stay inside its cell.
 *
 * @example
 * process.stdout.write(table(['keyId', 'tenant'], [['k1', 'acme']]));
 * // keyId  tenant
 * // -----  ------
 * // k1     acme
 */
const GAP = 2;
/** A column is never narrowed below this (or its natural width, when smaller). */
const MIN_COLUMN = 8;
export const DEFAULT_TABLE_WIDTH = 100;

/**
 * The width tables fit: the terminal's (100 when a terminal reports none); `COLUMNS` when stdout is not a terminal;
 * else unbounded, so a row piped into grep or a file stays one line (a cell's own line breaks still stay in it).
 */
export function tableWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY) return stream.columns || DEFAULT_TABLE_WIDTH;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : Number.POSITIVE_INFINITY;
}

export interface TableOptions {
  /** Total width in characters; default `tableWidth()`. */
  width?: number;
}

export function table(columns: string[], rows: string[][], options: TableOptions = {}): string {
  const width = Math.max(20, options.width ?? tableWidth());
  const cells = rows.map((r) => columns.map((_, i) => splitLines(r[i] ?? '')));
  const natural = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => Math.max(0, ...r[i]!.map((l) => l.length)))));
  const longestWord = columns.map((c, i) => Math.max(...c.split(' ').map((w) => w.length), ...cells.flatMap((r) => r[i]!.flatMap((l) => l.split(' ').map((w) => w.length)))));
  const widths = fitWidths(natural, longestWord, width);
  const render = (row: string[][]) => {
    const wrapped = row.map((lines, i) => lines.flatMap((l) => wrapLine(l, widths[i]!)));
    const height = Math.max(1, ...wrapped.map((w) => w.length));
    const out: string[] = [];
    for (let j = 0; j < height; j++) out.push(wrapped.map((w, i) => (w[j] ?? '').padEnd(widths[i]!)).join(' '.repeat(GAP)).trimEnd());
    return out;
  };
  const header = render(columns.map((c) => [c]));
  const rule = widths.map((w) => '-'.repeat(w)).join(' '.repeat(GAP));
  return [...header, rule, ...cells.flatMap(render)].join('\n') + '\n';
}

/**
 * Narrows the widest column one character at a time until the row fits: first only down to each column's longest
 * word (so text wraps at spaces and an id stays whole, to be copied), then down to `MIN_COLUMN`, breaking words.
 */
function fitWidths(natural: number[], longestWord: number[], total: number): number[] {
  const widths = [...natural];
  const sum = () => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);
  const hard = natural.map((n) => Math.min(n, MIN_COLUMN));
  const soft = longestWord.map((w, i) => Math.max(hard[i]!, Math.min(w, natural[i]!)));
  for (const floor of [soft, hard]) {
    while (sum() > total) {
      let widest = -1;
      for (let i = 0; i < widths.length; i++) if (widths[i]! > floor[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
      if (widest < 0) break;
      widths[widest]!--;
    }
  }
  return widths;
}

function splitLines(text: string): string[] {
  return text.replace(/\r\n?/g, '\n').replace(/\t/g, '  ').split('\n');
}

/** Wraps one line to `width`: at the last space that fits, else hard. */
export function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const out: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const space = rest.lastIndexOf(' ', width);
    const cut = space > 0 ? space : width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^ +/, '');
  }
  if (rest.length > 0 || out.length === 0) out.push(rest);
  return out;
}
