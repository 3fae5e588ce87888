/**
 * The refusals the ranking makes without a run: one-liners, a body identical to a sibling's (the answer is beside
 * it), and deletions whose spans overlap a better candidate's (one family of overlapping groups, classes, bodies and
 * files yields one task, not four).
 */
import type { ForgeCandidate } from '../certify-candidate.ts';
import type { RejectionCode, RunnableForgeSpec } from '../schemas.ts';
import type { CandidateFeatures } from './candidate-features.ts';

/** The reasons a candidate is refused before any run (their records carry no rank). */
export const RANKING_REFUSALS = ['one-liner', 'near-duplicate'] as const satisfies readonly RejectionCode[];

export interface Refusal {
  reason: (typeof RANKING_REFUSALS)[number];
  detail: string;
}

/**
 * The refusal a candidate earns on its own (size, identical sibling), if any; candidates without a profile earn none.
 *
 * @example
 * ownRefusal(candidate, spec); // { reason: 'one-liner', detail: 'removes 1 statement(s); at least 2 make a task' }
 */
export function ownRefusal(candidate: ForgeCandidate, spec: Pick<RunnableForgeSpec, 'minRemovedLines'>): Refusal | undefined {
  const profile = candidate.profile;
  if (!profile) return undefined;
  if (profile.removedLines < spec.minRemovedLines) return { reason: 'one-liner', detail: `removes ${profile.removedLines} statement(s); at least ${spec.minRemovedLines} make a task` };
  if (profile.identicalSibling) return { reason: 'near-duplicate', detail: `same body as ${profile.identicalSibling}` };
  return undefined;
}

/**
 * Which of an overlapping family is kept: the better tier (public and focused first), then the smallest coherent
 * unit (fewest statements removed), then the maker's order.
 */
export function familyOrder(a: CandidateFeatures, b: CandidateFeatures): number {
  const size = (f: CandidateFeatures) => (f.removedLines > 0 ? f.removedLines : Number.POSITIVE_INFINITY);
  return a.tier - b.tier || size(a) - size(b) || a.index - b.index;
}

type Span = { path: string; start: number; end: number };

function overlaps(a: readonly Span[], b: readonly Span[]): boolean {
  return a.some((x) => b.some((y) => x.path === y.path && x.start < y.end && y.start < x.end));
}

/**
 * Keeps, in `familyOrder`, each candidate whose deleted spans overlap no kept one's; the others are refused as
 * `near-duplicate` naming the kept candidate. Candidates without spans (made by hand) are always kept.
 *
 * @example
 * const { kept, refused } = resolveOverlaps(items);
 * refused[0]?.refusal.detail; // 'overlaps body-src-url.ts-withHttp-1a2b3c4d5e'
 */
export function resolveOverlaps<T extends { candidate: ForgeCandidate; features: CandidateFeatures }>(items: readonly T[]): { kept: T[]; refused: Array<T & { refusal: Refusal }> } {
  const sorted = [...items].sort((a, b) => familyOrder(a.features, b.features));
  const kept: T[] = [];
  const refused: Array<T & { refusal: Refusal }> = [];
  // Kept spans by path, so a large repository compares only candidates of the same file.
  const byPath = new Map<string, Array<{ id: string; spans: Span[] }>>();
  for (const item of sorted) {
    const spans = item.candidate.profile?.spans ?? [];
    const paths = [...new Set(spans.map((s) => s.path))];
    const other = paths.flatMap((p) => byPath.get(p) ?? []).find((k) => overlaps(spans, k.spans));
    if (other) {
      refused.push({ ...item, refusal: { reason: 'near-duplicate', detail: `overlaps ${other.id}` } });
      continue;
    }
    kept.push(item);
    for (const p of paths) {
      const list = byPath.get(p) ?? [];
      list.push({ id: item.candidate.id, spans });
      byPath.set(p, list);
    }
  }
  return { kept, refused };
}
