/**
 * How the CLI writes a value for a person: numbers rounded, fractions as percentages, lists and objects as plain
 * text (never JSON). `--json` prints the API's answer as it is; everything else goes through these.
 */

/**
 * A number with at most 3 decimals (3 significant digits below 1), no trailing zeros; integers as they are.
 *
 * @example
 * formatNumber(0.666666); // '0.667'
 * formatNumber(12.30001); // '12.3'
 * formatNumber(0.0001234); // '0.000123'
 */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  const text = Math.abs(n) >= 1 ? n.toFixed(3) : n.toPrecision(3);
  // toPrecision may answer in exponent form for very small numbers: keep it, it is short and exact enough.
  return text.includes('e') ? text : text.replace(/\.?0+$/, '');
}

/**
 * A fraction (0..1) as a percentage with one decimal.
 *
 * @example
 * formatPercent(0.6667); // '66.7%'
 */
export function formatPercent(fraction: number): string {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : String(fraction);
}

/**
 * A fraction with its interval, as percentages: `66.7% [41.2–85.3]`.
 *
 * @example
 * formatPercentInterval(0.5, 0.2, 0.8); // '50.0% [20.0–80.0]'
 */
export function formatPercentInterval(value: number, low?: number, high?: number): string {
  if (low === undefined || high === undefined) return formatPercent(value);
  return `${formatPercent(value)} [${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)}]`;
}

/**
 * Any value as the text of a table cell or a line: strings as they are, numbers rounded, lists joined by ", ",
 * objects as `key=value` pairs (nested keys joined by dots), nothing for null and undefined.
 *
 * @example
 * cellText({ repo: 'a', tools: ['x', 'y'], n: 0.33333 }); // 'repo=a, tools=x y, n=0.333'
 */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map((v) => (isPlainObject(v) ? `(${cellText(v)})` : cellText(v).replaceAll(',', ' '))).join(', ');
  if (value instanceof Date) return value.toISOString();
  if (isPlainObject(value)) {
    return flatten(value)
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.map((x) => (isPlainObject(x) ? `(${cellText(x)})` : cellText(x))).join(' ') : cellText(v)}`)
      .join(', ');
  }
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function flatten(value: Record<string, unknown>, prefix = ''): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (isPlainObject(v) && Object.keys(v).length > 0) out.push(...flatten(v, `${prefix}${k}.`));
    else out.push([`${prefix}${k}`, isPlainObject(v) ? '' : v]);
  }
  return out;
}

/**
 * `label: value` lines with the labels aligned, each value through `cellText` (a multi-line value keeps its lines,
 * indented under the first).
 *
 * @example
 * process.stdout.write(fieldLines([['id', 'ck-1'], ['model', 'coder']]));
 * // id     ck-1
 * // model  coder
 */
export function fieldLines(rows: Array<[string, unknown]>): string {
  const shown = rows.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown
    .map(([k, v]) => {
      const [first = '', ...rest] = cellText(v).split('\n');
      return [`${k.padEnd(width)}  ${first}`, ...rest.map((l) => `${' '.repeat(width + 2)}${l}`)].join('\n').trimEnd();
    })
    .join('\n')
    .concat(shown.length ? '\n' : '');
}
