/**
 * An index of the code files under one folder (an environment layer, a package folder of the machine), built once on
 * the host and then asked, per candidate, which files hold the deleted code: each file's winnowed fingerprints and
 * probe-line hashes (`code-fingerprints.ts`) are packed with the file's number into one float (hash × 2^21 + file,
 * exact below 2^53) and sorted, so a lookup is a binary search and the index of a `node_modules` the size of vitest's
 * tree is two typed arrays, not millions of objects. Symlinks are never followed (what they point to inside a layer
 * is indexed where it lies; outside it, the sandbox cannot read it either), and masked folders are skipped.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { codeFingerprints, dialectOf, probeLineHashes, type CodeDialect } from './code-fingerprints.ts';

/**
 * Files whose name says code a sandboxed program could load or read as source: code files, gzipped ones
 * (`index.js.gz`), and source maps, whose `sourcesContent` carries the original TypeScript verbatim.
 */
export const CODE_FILE = /\.(?:py|pyi|pyw|js|mjs|cjs|jsx|ts|mts|cts|tsx)(?:\.gz)?$|\.map$/;
/** Bigger files are skipped (a data blob named .js); a bundle like typescript.js (9 MB) is still read. */
export const MAX_CODE_FILE_BYTES = 16 * 1024 * 1024;
const FILE_SLOTS = 2 ** 21;
/** Oversize files named per index. */
const MAX_NAMED_OVERSIZE = 5;
/** A fingerprint that this many files hold is boilerplate, not evidence of a copy. */
export const COMMON_FILES = 40;
/**
 * Folders never entered: version control and bytecode caches (.pyc is no source). A tool cache such as
 * `node_modules/.cache` is entered: a sandbox reads it like any other folder of the layer.
 */
const SKIP_NAMES = new Set(['.git', '__pycache__']);

/**
 * The text a file gives an agent that reads it: gunzipped, or a source map's original sources.
 *
 * @example
 * readableText('dist/index.mjs.map', buffer) // { text: '<the original .ts sources>', dialect: 'script' }
 */
export function readableText(path: string, buffer: Buffer): { text: string; dialect: CodeDialect } | undefined {
  if (path.endsWith('.gz')) {
    let plain: Buffer;
    try {
      plain = gunzipSync(buffer, { maxOutputLength: MAX_CODE_FILE_BYTES });
    } catch {
      return undefined;
    }
    return { text: plain.toString('utf8'), dialect: dialectOf(path.slice(0, -3)) };
  }
  if (path.endsWith('.map')) {
    const text = sourcesContentOf(buffer.toString('utf8'));
    return text ? { text, dialect: 'script' } : undefined;
  }
  const text = buffer.toString('utf8');
  // A transpiled file may carry its source map inline (base64), original sources included.
  const inline = INLINE_SOURCE_MAP.exec(text);
  const sources = inline ? sourcesContentOf(Buffer.from(inline[1]!, 'base64').toString('utf8')) : undefined;
  return { text: sources ? `${text}\n${sources}` : text, dialect: dialectOf(path) };
}

const INLINE_SOURCE_MAP = /[#@] sourceMappingURL=data:application\/json;(?:charset=[\w-]+;)?base64,([A-Za-z0-9+/=]+)/;

/** A source map's original sources, joined; undefined when it carries none. */
function sourcesContentOf(json: string): string | undefined {
  let map: unknown;
  try {
    map = JSON.parse(json);
  } catch {
    return undefined;
  }
  const sources = (map as { sourcesContent?: unknown } | null)?.sourcesContent;
  if (!Array.isArray(sources)) return undefined;
  return sources.filter((s): s is string => typeof s === 'string').join('\n') || undefined;
}

/** A growable sorted-later array of packed (hash, file) entries. */
class PackedEntries {
  data = new Float64Array(1 << 16);
  length = 0;
  add(hashes: Uint32Array, file: number): void {
    if (this.length + hashes.length > this.data.length) {
      let size = this.data.length * 2;
      while (size < this.length + hashes.length) size *= 2;
      const next = new Float64Array(size);
      next.set(this.data.subarray(0, this.length));
      this.data = next;
    }
    for (let i = 0; i < hashes.length; i++) this.data[this.length++] = hashes[i]! * FILE_SLOTS + file;
  }
  sorted(): Float64Array {
    const out = this.data.slice(0, this.length);
    out.sort();
    return out;
  }
}

/** First index of `values` holding a packed entry of `hash` or later. */
function lowerBound(values: Float64Array, key: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The files holding `hash` (their numbers), or undefined when it is too common to tell anything. */
function filesOf(values: Float64Array, hash: number): Float64Array | undefined {
  const lo = lowerBound(values, hash * FILE_SLOTS);
  const hi = lowerBound(values, (hash + 1) * FILE_SLOTS);
  if (hi - lo > COMMON_FILES) return undefined;
  return values.subarray(lo, hi);
}

export interface CodeQuery {
  /** Fingerprints of the deleted code, one set per reading of it (as written, transpiled): a file's best counts. */
  variants: Uint32Array[];
  /** Hashes of its probe lines. */
  lines: Uint32Array;
}

export interface CodeMatch {
  file: string;
  /** Share of the deleted code's distinctive fingerprints the file holds (best reading). */
  share: number;
  shared: number;
  distinctive: number;
  /** Probe lines of the deleted code found verbatim in the file. */
  lines: number;
}

export interface CodeIndexStats {
  files: number;
  /** Code files over MAX_CODE_FILE_BYTES, not searched (the record names them: a sandbox can still read them). */
  oversize: number;
  bytes: number;
  fingerprints: number;
  lines: number;
  buildMs: number;
}

export class CodeIndex {
  readonly root: string;
  readonly files: string[];
  /** The first few code files too big to index. */
  readonly oversize: string[];
  readonly stats: CodeIndexStats;
  private readonly fingerprints: Float64Array;
  private readonly lineHashes: Float64Array;

  private constructor(root: string, files: string[], oversize: string[], fingerprints: Float64Array, lineHashes: Float64Array, stats: CodeIndexStats) {
    this.root = root;
    this.files = files;
    this.oversize = oversize;
    this.fingerprints = fingerprints;
    this.lineHashes = lineHashes;
    this.stats = stats;
  }

  /**
   * Indexes every code file under `root`, skipping the folders in `skip` (masked inside the sandbox).
   *
   * @example
   * const index = await CodeIndex.build('/var/cache/flywheel-envs/node-1a2b…/layer');
   * index.search({ variants: [codeFingerprints(removed, 'script')], lines: probeLineHashes(removed) });
   */
  static async build(root: string, options: { skip?: readonly string[] } = {}): Promise<CodeIndex> {
    const started = Date.now();
    const skip = new Set(options.skip ?? []);
    const files: string[] = [];
    const oversize: string[] = [];
    let oversizeCount = 0;
    const fingerprints = new PackedEntries();
    const lines = new PackedEntries();
    let bytes = 0;
    const pending: string[] = [root];
    const paths: string[] = [];
    while (pending.length > 0) {
      const dir = pending.pop()!;
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isDirectory()) {
          if (!SKIP_NAMES.has(e.name) && !skip.has(path)) pending.push(path);
        } else if (e.isFile() && CODE_FILE.test(e.name)) paths.push(path);
      }
    }
    paths.sort();
    // Reads run a few at a time ahead of the (synchronous) hashing, which yields between files.
    const READ_AHEAD = 16;
    const reads = new Map<number, Promise<Buffer | undefined>>();
    const read = (i: number) => reads.set(i, readFile(paths[i]!).catch(() => undefined));
    for (let i = 0; i < Math.min(READ_AHEAD, paths.length); i++) read(i);
    for (let i = 0; i < paths.length; i++) {
      const buffer = await reads.get(i)!;
      reads.delete(i);
      if (i + READ_AHEAD < paths.length) read(i + READ_AHEAD);
      if (buffer && buffer.length > MAX_CODE_FILE_BYTES) {
        if (oversize.length < MAX_NAMED_OVERSIZE) oversize.push(paths[i]!);
        oversizeCount++;
        continue;
      }
      if (!buffer || files.length >= FILE_SLOTS) continue;
      const readable = readableText(paths[i]!, buffer);
      if (!readable) continue;
      const file = files.length;
      files.push(paths[i]!);
      bytes += buffer.length;
      fingerprints.add(codeFingerprints(readable.text, readable.dialect), file);
      lines.add(probeLineHashes(readable.text), file);
    }
    const fp = fingerprints.sorted();
    const lh = lines.sorted();
    return new CodeIndex(root, files, oversize, fp, lh, { files: files.length, oversize: oversizeCount, bytes, fingerprints: fp.length, lines: lh.length, buildMs: Date.now() - started });
  }

  /**
   * Files holding at least `minShare` of the deleted code's distinctive fingerprints (and at least `minShared` of
   * them), or at least `minShare` of its probe lines (and at least `minLines`); best first.
   */
  search(query: CodeQuery, thresholds: { minShare: number; minShared: number; minLines: number }): CodeMatch[] {
    const best = new Map<number, { share: number; shared: number; distinctive: number }>();
    for (const variant of query.variants) {
      const counts = new Map<number, number>();
      let distinctive = 0;
      for (const hash of variant) {
        const holders = filesOf(this.fingerprints, hash);
        if (!holders) continue;
        distinctive++;
        for (const packed of holders) {
          const file = packed % FILE_SLOTS;
          counts.set(file, (counts.get(file) ?? 0) + 1);
        }
      }
      for (const [file, shared] of counts) {
        const share = shared / distinctive;
        const prior = best.get(file);
        if (!prior || share > prior.share) best.set(file, { share, shared, distinctive });
      }
    }
    const lineCounts = new Map<number, number>();
    for (const hash of query.lines) {
      const holders = filesOf(this.lineHashes, hash);
      for (const packed of holders ?? []) {
        const file = packed % FILE_SLOTS;
        lineCounts.set(file, (lineCounts.get(file) ?? 0) + 1);
      }
    }
    const out: CodeMatch[] = [];
    for (const file of new Set([...best.keys(), ...lineCounts.keys()])) {
      const fp = best.get(file) ?? { share: 0, shared: 0, distinctive: 0 };
      const lines = lineCounts.get(file) ?? 0;
      const byFingerprints = fp.shared >= thresholds.minShared && fp.share >= thresholds.minShare;
      const byLines = query.lines.length > 0 && lines >= thresholds.minLines && lines / query.lines.length >= thresholds.minShare;
      if (byFingerprints || byLines) out.push({ file: this.files[file]!, ...fp, lines });
    }
    return out.sort((a, b) => b.share - a.share || b.lines - a.lines);
  }
}
