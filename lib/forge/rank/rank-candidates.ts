/**
 * Orders candidates before any is tried, and refuses those not worth a run: see `rankCandidates`.
 */
import type { ForgeCandidate } from '../certify-candidate.ts';
import type { Baseline, RejectionCode, RunnableForgeSpec } from '../schemas.ts';
import { candidateFeatures, RANK_TIERS, testUniverse, type CandidateFeatures } from './candidate-features.ts';
import { spreadOrder } from './spread-order.ts';
import { ownRefusal, resolveOverlaps } from './static-refusals.ts';

/** How the ranking saw one candidate (stored on its record). */
export interface CandidateRank {
  /** 0-based place in the order tried. */
  position: number;
  /** Higher is better: 4 per tier above the last (public focused 12+, private 8+, broad 4+, untested 0+), plus quality 0…3. */
  score: number;
  isPublic: boolean;
  /** Statements removed (0 when unknown: a candidate without a profile). */
  removedLines: number;
  /** 0 (trivial) … 1 (large); mid-sized (0.5) is favoured. */
  difficulty: number;
  /** Collected test files that statically reach it. */
  relatedTests: number;
}

export interface RankedCandidates {
  /** In the order they are tried, at most `limit`. */
  ordered: Array<{ candidate: ForgeCandidate; rank: CandidateRank }>;
  /** Refused without a run, each with its reason (one-liner, near duplicate, …). */
  refused: Array<{ candidate: ForgeCandidate; reason: RejectionCode; detail: string }>;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function rankOf(f: CandidateFeatures, position: number): CandidateRank {
  return {
    position,
    score: round(4 * (RANK_TIERS.length - 1 - f.tier) + f.quality),
    isPublic: f.isPublic,
    removedLines: f.removedLines,
    difficulty: round(f.difficulty),
    relatedTests: f.relatedTests,
  };
}

/**
 * Refuses one-liners, identical-sibling bodies and the lesser members of overlapping families without a run, then
 * orders the rest by tier (public focused, private focused, broad, untested: every public API before any private
 * helper); within a tier one file (and directory) at a time, drawn with the spec's seed, so that the first N of a tier
 * come from N different files; within a file the better tier, then focus and mid-sized deletions. Deterministic for a seed.
 *
 * @example
 * const { ordered, refused } = rankCandidates(found, { spec, baseline, limit: candidateLimit(spec) });
 * ordered[0]?.rank; // { position: 0, score: 14.2, isPublic: true, removedLines: 9, difficulty: 0.474, relatedTests: 2 }
 * refused[0]; // { candidate, reason: 'one-liner', detail: 'removes 1 statement(s); at least 2 make a task' }
 */
export function rankCandidates(candidates: readonly ForgeCandidate[], input: { spec: RunnableForgeSpec; baseline: Baseline; limit: number }): RankedCandidates {
  const universe = testUniverse(candidates, input.baseline.collectedFiles);
  const items = candidates.map((candidate, index) => ({ candidate, features: candidateFeatures(candidate, index, universe) }));
  const refused: Array<{ candidate: ForgeCandidate; reason: RejectionCode; detail: string; index: number }> = [];
  const eligible: typeof items = [];
  for (const item of items) {
    const refusal = ownRefusal(item.candidate, input.spec);
    if (refusal) refused.push({ candidate: item.candidate, ...refusal, index: item.features.index });
    else eligible.push(item);
  }
  const families = resolveOverlaps(eligible);
  for (const r of families.refused) refused.push({ candidate: r.candidate, ...r.refusal, index: r.features.index });
  const ordered = spreadOrder(families.kept, { seed: input.spec.seed, limit: input.limit }).map((item, position) => ({ candidate: item.candidate, rank: rankOf(item.features, position) }));
  return { ordered, refused: refused.sort((a, b) => a.index - b.index).map(({ candidate, reason, detail }) => ({ candidate, reason, detail })) };
}
