/**
 * Stride scheduling (Waldspurger & Weihl, 1995) over the five compute categories: each category has a `pass`; the
 * next free slot goes to the waiting category with the lowest pass, whose pass then grows by its stride
 * (1 / share). Over any stretch where categories keep jobs waiting, each gets slots in proportion to its share
 * (within one slot), deterministically; a category with nothing waiting is skipped and its share goes to the others.
 *
 * A category that starts waiting again does not bring credit banked while idle: its pass is raised to the lowest
 * pass among the categories that kept waiting (the "global pass"), so it cannot take a run of slots at once. This is
 * the local counterpart of a Batch fair-share queue with no share decay; the pass values live in memory, so a
 * restart of the runtime starts every category level.
 *
 * @example
 * const scheduler = new StrideScheduler({ inference: 1, training: 3, 'data-and-reward': 2, evaluation: 3, research: 1 });
 * const category = scheduler.next(new Set(['training', 'research'])); // 'training' 3 times for each 'research'
 */
import { COMPUTE_CATEGORIES, type ComputeCategory } from '../ports/jobs.ts';

export class StrideScheduler {
  readonly #stride = new Map<ComputeCategory, number>();
  readonly #pass = new Map<ComputeCategory, number>();
  #waitingBefore = new Set<ComputeCategory>();

  constructor(shares: Record<ComputeCategory, number>) {
    for (const category of COMPUTE_CATEGORIES) {
      const share = shares[category];
      if (!Number.isFinite(share) || share <= 0) throw new RangeError(`share of ${category} must be positive (got ${share})`);
      this.#stride.set(category, 1 / share);
      this.#pass.set(category, 0);
    }
  }

  /** Picks the category whose job starts next among those with jobs waiting; undefined when none waits. */
  next(waiting: ReadonlySet<ComputeCategory>): ComputeCategory | undefined {
    const candidates = COMPUTE_CATEGORIES.filter((c) => waiting.has(c));
    if (candidates.length === 0) {
      this.#waitingBefore = new Set();
      return undefined;
    }
    const stayed = candidates.filter((c) => this.#waitingBefore.has(c));
    const globalPass = stayed.length > 0 ? Math.min(...stayed.map((c) => this.#pass.get(c)!)) : Math.min(...candidates.map((c) => this.#pass.get(c)!));
    for (const c of candidates) {
      if (!this.#waitingBefore.has(c)) this.#pass.set(c, Math.max(this.#pass.get(c)!, globalPass));
    }
    let best = candidates[0]!;
    for (const c of candidates) if (this.#pass.get(c)! < this.#pass.get(best)!) best = c;
    this.#pass.set(best, this.#pass.get(best)! + this.#stride.get(best)!);
    this.#waitingBefore = new Set(candidates);
    return best;
  }
}
