/**
 * Compiled Python and tool caches in the agent's diff. Grading never applies them: the verdict must come from the
 * source the diff shows, not from bytecode compiled from some other source (an unchecked-hash `.pyc` of a fixed
 * module beside the still-buggy `.py` passes the tests while the diff shows no fix).
 *
 * What is dropped from the applied diff (left at the base version, recorded in the grade's `dropped`):
 * - `bytecode`: every `*.pyc` / `*.pyo`, wherever it is;
 * - `cache`: anything under a `__pycache__/` or `.pytest_cache/` directory;
 * - `extension-module`: a compiled extension (`*.so`, `*.pyd`) named like a `.py` module that the base tree or the
 *   diff has in the same directory (`calc/__init__.cpython-311-x86_64-linux-gnu.so` beside `calc/__init__.py`).
 *   Python's importer tries extension modules BEFORE source in every directory, so such a file replaces the module
 *   the diff appears to leave alone. A judgement call: an extension with no `.py` of the same name (a vendored
 *   binary, a Cython build product beside its `.pyx`) is kept and applied as it is — it replaces no source, and
 *   dropping it could break a legitimate repository; the diff still names it for a reviewer.
 *
 * What is flagged (`runner-shadowing`, which fails strict grading) — only what the diff adds or changes that would
 * stand in for a source module (deleting one the base has is no such thing):
 * an unchecked-hash `.pyc` in a `__pycache__` (Python loads it without looking at the source; an ordinary cache is
 * timestamp-based or checked-hash and is validated against the source, so an honest agent that ran its tests leaves
 * only harmless caches), a sourceless `.pyc`/`.pyo` beside its module's `.py`, and a shadowing extension module.
 * The graded run itself never reads a cache the tree holds either (see `pytest-stream.ts` and `gradingPrelude`).
 */
import { inflateSync } from 'node:zlib';
import { parseUnifiedDiff, unquoteGitPath } from '../integrity/unified-diff.ts';

export type CompiledKind = 'bytecode' | 'cache' | 'extension-module';

/** How a `.pyc` says it is validated (PEP 552): against the source's mtime and size, its hash, or not at all. */
export type PycValidation = 'timestamp' | 'checked-hash' | 'unchecked-hash' | 'unreadable';

export interface DroppedFile {
  path: string;
  kind: CompiledKind;
  /** The source module (`calc/__init__.py`) the file would be loaded instead of, when the tree or the diff has it. */
  shadows?: string;
  /** For `.pyc`/`.pyo` files the diff adds in full: how the file says Python validates it. */
  pyc?: PycValidation;
  /** True when it would stand in for `shadows` (see the module comment): a `runner-shadowing` flag. */
  shadowing?: boolean;
}

const CACHE_DIRS = new Set(['__pycache__', '.pytest_cache']);

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function dirPrefix(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i + 1);
}

/** True for `*.pyc`, `*.pyo`, anything under `__pycache__/` or `.pytest_cache/`: never applied from a diff. */
export function isAlwaysDropped(path: string): boolean {
  return /\.py[co]$/i.test(path) || path.split('/').slice(0, -1).some((part) => CACHE_DIRS.has(part));
}

/** True for a compiled extension module's name (`*.so`, `*.pyd`). */
export function isExtensionModule(path: string): boolean {
  return /\.(?:so|pyd)$/i.test(path);
}

/**
 * The `.py` file a compiled file would be imported instead of (or alongside), by its name alone:
 * `pkg/__pycache__/mod.cpython-311.pyc` and `pkg/mod.pyc` → `pkg/mod.py`; `pkg/mod.cpython-311-x86_64-linux-gnu.so`
 * and `pkg/mod.abi3.so` → `pkg/mod.py`. Undefined for anything else.
 */
export function moduleSourceOf(path: string): string | undefined {
  const name = basename(path);
  const dir = dirPrefix(path);
  const mod = name.slice(0, name.indexOf('.'));
  if (mod === '' || !/^[A-Za-z_]\w*$/.test(mod)) return undefined;
  if (/\.py[co]$/i.test(name)) {
    if (dir.endsWith('__pycache__/')) return `${dir.slice(0, -'__pycache__/'.length)}${mod}.py`;
    if (dir.split('/').some((p) => CACHE_DIRS.has(p))) return undefined;
    return `${dir}${mod}.py`;
  }
  if (isExtensionModule(name) && !dir.split('/').some((p) => CACHE_DIRS.has(p))) return `${dir}${mod}.py`;
  return undefined;
}

/** Reads a `.pyc` header (magic, then a 32-bit flags word: 0 timestamp, 0b11 checked hash, 0b01 unchecked hash). */
export function pycValidation(bytes: Uint8Array | undefined): PycValidation {
  if (!bytes || bytes.length < 16 || bytes[2] !== 0x0d || bytes[3] !== 0x0a) return 'unreadable';
  const flags = bytes[4]! | (bytes[5]! << 8) | (bytes[6]! << 16) | (bytes[7]! << 24);
  if (flags === 0) return 'timestamp';
  if (flags === 0b11) return 'checked-hash';
  if (flags === 0b01) return 'unchecked-hash';
  return 'unreadable';
}

const B85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';
const B85_VALUE = new Map([...B85].map((c, i) => [c, i]));

/** Decodes the lines of one hunk of a `GIT binary patch` (each line: a length character, then base85). */
function decodeGitBase85(lines: readonly string[]): Buffer | undefined {
  const out: number[] = [];
  for (const line of lines) {
    const c = line.charCodeAt(0);
    const len = c >= 65 && c <= 90 ? c - 64 : c >= 97 && c <= 122 ? c - 96 + 26 : -1;
    if (len < 0) return undefined;
    const body = line.slice(1);
    const bytes: number[] = [];
    for (let i = 0; i + 5 <= body.length; i += 5) {
      let acc = 0;
      for (let j = 0; j < 5; j++) {
        const v = B85_VALUE.get(body[i + j]!);
        if (v === undefined) return undefined;
        acc = acc * 85 + v;
      }
      bytes.push((acc >>> 24) & 0xff, (acc >>> 16) & 0xff, (acc >>> 8) & 0xff, acc & 0xff);
    }
    if (bytes.length < len) return undefined;
    out.push(...bytes.slice(0, len));
  }
  return Buffer.from(out);
}

const MAX_LITERAL_BYTES = 16 * 1024 * 1024;

/**
 * The full new content of the files a git patch (`git diff --binary`) gives as a binary `literal` (added or
 * rewritten in full), for the paths asked for. A `delta` hunk (against the old content) is not resolved.
 *
 * @example
 * binaryLiterals(diff, new Set(['calc/__pycache__/__init__.cpython-311.pyc'])).get('calc/__pycache__/__init__.cpython-311.pyc');
 */
export function binaryLiterals(diff: string, wanted: ReadonlySet<string>): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (wanted.size === 0) return out;
  const lines = diff.split('\n');
  let path: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('diff --git ')) {
      path = headerPath(line.slice('diff --git '.length));
      continue;
    }
    if (line.startsWith('rename to ')) path = unquoteGitPath(unquote(line.slice('rename to '.length)));
    if (line !== 'GIT binary patch' || path === undefined || !wanted.has(path) || out.has(path)) continue;
    const m = /^literal (\d+)$/.exec(lines[i + 1] ?? '');
    if (!m || Number(m[1]) > MAX_LITERAL_BYTES) continue;
    const body: string[] = [];
    for (let j = i + 2; j < lines.length && lines[j] !== ''; j++) body.push(lines[j]!);
    const deflated = decodeGitBase85(body);
    if (!deflated) continue;
    try {
      const content = inflateSync(deflated, { maxOutputLength: MAX_LITERAL_BYTES });
      if (content.length === Number(m[1])) out.set(path, content);
    } catch {
      /* not a literal git wrote: left unread */
    }
  }
  return out;
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s;
}

/** The new path of a `diff --git a/X b/X` header (same name both sides, spaces allowed; quoted names undone). */
function headerPath(rest: string): string | undefined {
  const quoted = /^"a\/((?:[^"\\]|\\.)*)" "b\/((?:[^"\\]|\\.)*)"$/.exec(rest);
  if (quoted) return unquoteGitPath(quoted[2]!);
  if (!rest.startsWith('a/')) return undefined;
  const half = (rest.length - 5) / 2;
  if (!Number.isInteger(half) || half <= 0) return undefined;
  const a = rest.slice(2, 2 + half);
  const b = rest.slice(2 + half + 3);
  return rest.slice(2 + half, 2 + half + 3) === ' b/' && a === b ? b : undefined;
}

/**
 * Sorts the paths a diff touches into compiled files grading drops (see the module comment) and judges each.
 * `sourceExists(path)`: whether the base tree or the diff has that file.
 *
 * @example
 * const dropped = compiledFiles(diff, touchedPaths, (p) => baseHas(p) || touchedPaths.includes(p));
 * // [{ path: 'calc/__pycache__/__init__.cpython-311.pyc', kind: 'bytecode', shadows: 'calc/__init__.py', pyc: 'unchecked-hash', shadowing: true }]
 */
export function compiledFiles(diff: string, paths: readonly string[], sourceExists: (path: string) => boolean): DroppedFile[] {
  const out: DroppedFile[] = [];
  for (const path of paths) {
    const always = isAlwaysDropped(path);
    const source = moduleSourceOf(path);
    const shadows = source !== undefined && sourceExists(source) ? source : undefined;
    if (!always && !(isExtensionModule(path) && shadows)) continue;
    const kind: CompiledKind = /\.py[co]$/i.test(path) ? 'bytecode' : isExtensionModule(path) ? 'extension-module' : 'cache';
    out.push({ path, kind, ...(shadows ? { shadows } : {}) });
  }
  const literals = binaryLiterals(diff, new Set(out.filter((d) => d.kind === 'bytecode').map((d) => d.path)));
  // Deleting a compiled file the base has (a stale cache cleaned up) stands in for nothing.
  const deleted = new Set(out.length > 0 ? parseUnifiedDiff(diff).filter((f) => f.status === 'deleted').map((f) => f.path) : []);
  for (const d of out) {
    if (d.kind === 'bytecode') {
      const content = literals.get(d.path);
      if (content) d.pyc = pycValidation(content);
    }
    if (!d.shadows || deleted.has(d.path)) continue;
    const inCache = d.path.split('/').includes('__pycache__');
    if (d.kind === 'extension-module') d.shadowing = true;
    else if (d.kind === 'bytecode' && !inCache) d.shadowing = true;
    else if (d.kind === 'bytecode' && d.pyc === 'unchecked-hash') d.shadowing = true;
  }
  return out;
}

/** A `git apply --exclude`/`--include` pattern that matches exactly `path` (wildmatch specials escaped). */
export function exactApplyPattern(path: string): string {
  return path.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}
