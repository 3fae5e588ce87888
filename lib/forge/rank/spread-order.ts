/**
 * The order candidates are tried in. Each next pick is the best head of some file's queue, preferring (in this order)
 * the better tier (public focused, private focused, broad, untested: public API before any private helper), a file
 * picked fewer times, a feature area (directory) picked fewer times, then the candidate's quality plus a seeded draw
 * per file; so within a tier the first N tried come from N different files where the repository has them, spread over
 * its directories, in an order the seed fixes and path order does not.
 */
import { createHash } from 'node:crypto';
import { type CandidateFeatures } from './candidate-features.ts';

/** A number in [0, 1) drawn from the seed and a file path: the same on every run and machine. */
export function seededDraw(seed: number, key: string): number {
  return createHash('sha256').update(`${seed}\0${key}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Within one file: better tier, then higher quality, then the maker's order. */
function withinFile(a: CandidateFeatures, b: CandidateFeatures): number {
  return a.tier - b.tier || b.quality - a.quality || a.index - b.index;
}

/**
 * At most `limit` of `items` in the order they are tried.
 *
 * @example
 * const ordered = spreadOrder(items, { seed: spec.seed, limit: 200 }); // first picks: one per file
 */
export function spreadOrder<T extends { features: CandidateFeatures }>(items: readonly T[], options: { seed: number; limit: number }): T[] {
  const queues = new Map<string, T[]>();
  for (const item of items) {
    const q = queues.get(item.features.file) ?? [];
    q.push(item);
    queues.set(item.features.file, q);
  }
  for (const q of queues.values()) q.sort((a, b) => withinFile(a.features, b.features));
  const draw = new Map([...queues.keys()].map((f) => [f, seededDraw(options.seed, f)]));
  const fileUses = new Map<string, number>();
  const areaUses = new Map<string, number>();
  const heads = new Map([...queues.keys()].map((f) => [f, 0]));
  const out: T[] = [];
  while (out.length < Math.min(options.limit, items.length)) {
    let best: { file: string; item: T; key: number[] } | undefined;
    for (const [file, q] of queues) {
      const item = q[heads.get(file)!];
      if (!item) continue;
      const f = item.features;
      // Compared left to right: smaller wins.
      const key = [f.tier, fileUses.get(file) ?? 0, areaUses.get(f.area) ?? 0, -(f.quality + draw.get(file)!), f.index];
      if (!best || lexicallyLess(key, best.key)) best = { file, item, key };
    }
    if (!best) break;
    out.push(best.item);
    heads.set(best.file, heads.get(best.file)! + 1);
    fileUses.set(best.file, (fileUses.get(best.file) ?? 0) + 1);
    areaUses.set(best.item.features.area, (areaUses.get(best.item.features.area) ?? 0) + 1);
  }
  return out;
}

function lexicallyLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}
