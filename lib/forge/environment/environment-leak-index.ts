/**
 * The leak index of one environment: a `CodeIndex` per folder a sandbox of it can read (`reachable-roots.ts`), each
 * built once per process and shared by every environment that shows the same folder (the machine's package folders,
 * a toolchain's), and a search that names what it finds the way the sandbox sees it.
 */
import type { SandboxEnvironment } from '../../harness/sandbox/sandbox.ts';
import { CodeIndex, type CodeMatch } from './code-index.ts';
import { deletedCodeQuery } from './deleted-code-query.ts';
import { insideMappings, insidePath, reachableRoots, type ReachableRoot } from './reachable-roots.ts';

/** A file holding at least this share of the deleted code's distinctive fingerprints (or probe lines) holds a copy. */
export const LEAK_MIN_SHARE = 0.5;
/** …and at least this many of them (a few shared runs of ten tokens in one file are no accident). */
export const LEAK_MIN_SHARED_FINGERPRINTS = 3;
/** …or at least this many probe lines verbatim. */
export const LEAK_MIN_LINES = 2;

/** Folder indexes kept for reuse by later environments (the oldest is dropped first; one in use stays alive). */
export const MAX_CACHED_FOLDER_INDEXES = 16;
const rootIndexes = new Map<string, Promise<CodeIndex>>();

function indexOf(root: ReachableRoot): Promise<CodeIndex> {
  let index = rootIndexes.get(root.source);
  if (!index) {
    index = CodeIndex.build(root.source);
    rootIndexes.set(root.source, index);
    while (rootIndexes.size > MAX_CACHED_FOLDER_INDEXES) rootIndexes.delete(rootIndexes.keys().next().value!);
    // A failed build is retried by the next environment that needs the folder.
    index.catch(() => rootIndexes.delete(root.source));
  }
  return index;
}

export interface EnvironmentLeak extends CodeMatch {
  /** The file as the sandbox names it. */
  inside: string;
}

export interface LeakSearch {
  leaks: EnvironmentLeak[];
  files: number;
  /** Code files too big to index, as the sandbox names them (the first few), and how many in all. */
  oversize: string[];
  oversizeCount: number;
  ms: number;
}

export class EnvironmentLeakIndex {
  readonly roots: ReachableRoot[];
  /** Package folders covered inside the sandbox (not reachable, not searched). */
  readonly masked: string[];
  private readonly mappings: Array<{ source: string; inside: string }>;
  private readonly indexes: Promise<CodeIndex[]>;

  private constructor(roots: ReachableRoot[], masked: string[], mappings: Array<{ source: string; inside: string }>) {
    this.roots = roots;
    this.masked = masked;
    this.mappings = mappings;
    this.indexes = Promise.all(roots.map(indexOf));
    this.indexes.catch(() => undefined);
  }

  /**
   * Finds what the environment shows and starts indexing it (in the background; `ready` and `search` wait for it).
   *
   * @example
   * const index = await EnvironmentLeakIndex.open(environment, { exposedPaths, masks });
   * (await index.search(removedCode)).leaks[0]?.inside // '<workspace>/node_modules/url-kit/dist/index.mjs'
   */
  static async open(environment: SandboxEnvironment, extra: { exposedPaths?: readonly string[]; masks?: readonly string[] } = {}): Promise<EnvironmentLeakIndex> {
    const { roots, masked } = await reachableRoots(environment, extra);
    return new EnvironmentLeakIndex(roots, masked, await insideMappings(environment, roots));
  }

  /** Waits for every folder's index; their sizes and build times. */
  async ready(): Promise<{ files: number; bytes: number; fingerprints: number; buildMs: number }> {
    const indexes = await this.indexes;
    return {
      files: indexes.reduce((n, i) => n + i.stats.files, 0),
      bytes: indexes.reduce((n, i) => n + i.stats.bytes, 0),
      fingerprints: indexes.reduce((n, i) => n + i.stats.fingerprints, 0),
      buildMs: Math.max(0, ...indexes.map((i) => i.stats.buildMs)),
    };
  }

  /** The files of the environment that hold a copy of the deleted code, best first. */
  async search(removedCode: string): Promise<LeakSearch> {
    const indexes = await this.indexes;
    const started = Date.now();
    const query = deletedCodeQuery(removedCode);
    const leaks: EnvironmentLeak[] = [];
    if (query.variants.length > 0 || query.lines.length > 0) {
      for (const index of indexes) {
        for (const match of index.search(query, { minShare: LEAK_MIN_SHARE, minShared: LEAK_MIN_SHARED_FINGERPRINTS, minLines: LEAK_MIN_LINES })) {
          leaks.push({ ...match, inside: insidePath(match.file, this.mappings) });
        }
      }
    }
    leaks.sort((a, b) => b.share - a.share || b.lines - a.lines);
    return {
      leaks,
      files: indexes.reduce((n, i) => n + i.stats.files, 0),
      oversize: indexes.flatMap((i) => i.oversize.map((f) => insidePath(f, this.mappings))).slice(0, 5),
      oversizeCount: indexes.reduce((n, i) => n + i.stats.oversize, 0),
      ms: Date.now() - started,
    };
  }
}
