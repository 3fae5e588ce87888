/**
 * What the ranking reads of one candidate before anything runs: where it is (file, feature area), whether a user
 * calls it (public), how focused its tests are (the share of the collected test files that reach it), and a
 * difficulty estimate; from them its tier (public focused, private focused, broad, untested) and a quality within
 * the tier. Candidates made by hand carry no profile: they count as public, of unknown size (mid difficulty).
 */
import type { ForgeCandidate } from '../certify-candidate.ts';

/** Above this share of the collected test files a candidate is broad (a near import error, not a feature). */
export const BROAD_SHARE = 0.5;
/** Suites with fewer collected test files than this are too small to call any candidate broad. */
export const BROAD_MIN_FILES = 4;
/** The effort (statements, plus 3 per extra symbol) at which the difficulty estimate is 0.5: the size favoured. */
export const MID_EFFORT = 10;

/** Tried in this order, whatever the spread: public API first, then private helpers, then broad, then untested. */
export const RANK_TIERS = ['public-focused', 'private-focused', 'broad', 'untested'] as const;
export type RankTier = (typeof RANK_TIERS)[number];

export interface CandidateFeatures {
  /** Position in the input (the last tie-break, so equal candidates keep their maker's order). */
  index: number;
  /** The file the entry point lives in (or the first edited file). */
  file: string;
  /** The feature area: the file's directory. */
  area: string;
  isPublic: boolean;
  /** Statements removed (0 when unknown). */
  removedLines: number;
  /** Collected test files that statically reach the candidate. */
  relatedTests: number;
  /** 1 − the share of the collected test files reaching it; 0 when none does. */
  focus: number;
  /** 0 (trivial) … 1 (large); 0.5 when the size is unknown. */
  difficulty: number;
  /** Index into `RANK_TIERS` (smaller is tried first). */
  tier: number;
  /** Within the tier, 0…3: focus (×2) and how close the difficulty is to the middle. */
  quality: number;
}

/** The test-file universe the focus is measured against. */
export interface TestUniverse {
  /** Test files the runner collected (empty when the reports do not tell). */
  collected: readonly string[];
  /** Denominator of the share: the collected files, else every test file some candidate reaches. */
  size: number;
  /** The collected paths, and every trailing part of them (`packages/a/test/x.ts` → `test/x.ts`, `x.ts`): O(1) matching. */
  exact: ReadonlySet<string>;
  tails: ReadonlySet<string>;
}

function tailsOf(path: string): string[] {
  const parts = path.split('/');
  return parts.map((_, i) => parts.slice(i).join('/'));
}

/**
 * @example
 * const universe = testUniverse(candidates, baseline.collectedFiles);
 * universe.size; // 12
 */
export function testUniverse(candidates: readonly ForgeCandidate[], collectedFiles: readonly string[]): TestUniverse {
  if (collectedFiles.length > 0) return { collected: collectedFiles, size: collectedFiles.length, exact: new Set(collectedFiles), tails: new Set(collectedFiles.flatMap(tailsOf)) };
  const reached = new Set(candidates.flatMap((c) => c.testFiles ?? []));
  return { collected: [], size: Math.max(1, reached.size), exact: new Set(), tails: new Set() };
}

/** Same file, seen from the repository root or from a package the runner ran in (`packages/a/test/x.ts` vs `test/x.ts`). */
function isCollected(file: string, universe: TestUniverse): boolean {
  return universe.tails.has(file) || tailsOf(file).some((t) => universe.exact.has(t));
}

/**
 * The static test files of a candidate that the runner collects (all of them when the collected set is unknown).
 *
 * @example
 * collectedTestFiles(candidate, universe); // ['tests/test_prices.py']
 */
export function collectedTestFiles(candidate: Pick<ForgeCandidate, 'testFiles'>, universe: TestUniverse): string[] {
  const files = candidate.testFiles ?? [];
  if (universe.collected.length === 0) return [...files];
  return files.filter((f) => isCollected(f, universe));
}

/**
 * The file a candidate is about: its entry point's (`src/url.ts#withHttp` → `src/url.ts`; a file candidate's entry
 * point with no main symbol is the path itself), else the first file it edits.
 *
 * @example
 * primaryFile(candidate.profile?.entryPoint, candidate.edits.map((e) => e.path)); // 'src/url.ts'
 */
export function primaryFile(entryPoint: string | undefined, files: readonly string[]): string {
  if (entryPoint) return entryPoint.includes('#') ? entryPoint.slice(0, entryPoint.indexOf('#')) : entryPoint;
  return files[0] ?? '';
}

/** The directory a file is in (`src/url.ts` → `src`, `setup.py` → `.`): a candidate's feature area. */
export function directoryOf(file: string): string {
  const slash = file.lastIndexOf('/');
  return slash < 0 ? '.' : file.slice(0, slash);
}

/**
 * The difficulty estimate: statements removed plus three per symbol beyond the first, squashed to 0…1 (0.5 at
 * `MID_EFFORT`). Unknown size (no profile) is 0.5.
 *
 * @example
 * difficultyOf({ removedLines: 10, symbols: 1 }); // 0.5
 */
export function difficultyOf(input: { removedLines: number | undefined; symbols: number }): number {
  if (input.removedLines === undefined) return 0.5;
  const effort = input.removedLines + 3 * Math.max(0, input.symbols - 1);
  return effort / (effort + MID_EFFORT);
}

/**
 * @example
 * const f = candidateFeatures(candidate, 0, testUniverse(all, baseline.collectedFiles));
 * RANK_TIERS[f.tier]; // 'public-focused'
 */
export function candidateFeatures(candidate: ForgeCandidate, index: number, universe: TestUniverse): CandidateFeatures {
  const file = primaryFile(candidate.profile?.entryPoint, candidate.edits.map((e) => e.path));
  const isPublic = candidate.profile?.isPublic ?? true;
  const relatedTests = collectedTestFiles(candidate, universe).length;
  const share = relatedTests / universe.size;
  const focus = relatedTests === 0 ? 0 : Math.max(0, 1 - share);
  const difficulty = difficultyOf({ removedLines: candidate.profile?.removedLines, symbols: candidate.symbols.length });
  const broad = share > BROAD_SHARE && universe.size >= BROAD_MIN_FILES;
  const tier: RankTier = relatedTests === 0 ? 'untested' : broad ? 'broad' : isPublic ? 'public-focused' : 'private-focused';
  const fit = 1 - 2 * Math.abs(difficulty - 0.5);
  return {
    index,
    file,
    area: directoryOf(file),
    isPublic,
    removedLines: candidate.profile?.removedLines ?? 0,
    relatedTests,
    focus,
    difficulty,
    tier: RANK_TIERS.indexOf(tier),
    quality: 2 * focus + fit,
  };
}
