/**
 * Building candidates: text splices applied back to front, stable ids from the strategy and the edits, and
 * deduplication of candidates whose edits are identical.
 */
import { createHash } from 'node:crypto';
import type { Candidate, CandidateContext, CandidateFileEdit, CandidateLanguage, CandidateProfile, CandidateStrategy } from '../candidate.ts';

/** Replace `[start, end)` of a text by `text`. */
export interface Splice {
  start: number;
  end: number;
  text: string;
}

/** Applies non-overlapping splices (any order); throws on overlap, which would be a strategy's bug. */
export function applySplices(text: string, splices: Splice[]): string {
  const sorted = [...splices].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  let limit = Number.POSITIVE_INFINITY;
  for (const s of sorted) {
    if (s.end > limit) throw new Error(`overlapping edits at ${s.start}-${s.end}`);
    out = out.slice(0, s.start) + s.text + out.slice(s.end);
    limit = s.start;
  }
  return out;
}

const SHORT: Record<CandidateStrategy, string> = { 'function-body': 'body', class: 'class', 'function-group': 'group', file: 'file' };

/** The stable id: strategy, a readable slug, and the first 10 hex digits of sha-256(strategy, sorted edits). */
export function candidateId(strategy: CandidateStrategy, label: string, edits: CandidateFileEdit[]): string {
  const h = createHash('sha256').update(strategy);
  for (const e of [...edits].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    h.update('\0path\0').update(e.path).update(e.content === null ? '\0deleted\0' : `\0content\0${e.content}`);
  }
  const slug = label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 60) || 'x';
  return `${SHORT[strategy]}-${slug}-${h.digest('hex').slice(0, 10)}`;
}

export function makeCandidate(input: {
  strategy: CandidateStrategy;
  language: CandidateLanguage;
  label: string;
  symbols: string[];
  edits: CandidateFileEdit[];
  context: CandidateContext;
  profile?: CandidateProfile;
}): Candidate {
  const edits = [...input.edits].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return {
    id: candidateId(input.strategy, input.label, edits),
    strategy: input.strategy,
    language: input.language,
    symbols: input.symbols,
    files: edits.map((e) => e.path),
    edits,
    context: input.context,
    ...(input.profile ? { profile: input.profile } : {}),
  };
}

/** Drops candidates whose id (strategy + edits) was seen, and candidates that change nothing; keeps the first. */
export function dedupeCandidates(candidates: Candidate[]): Candidate[] {
  const seen = new Set<string>();
  const byEdits = new Set<string>();
  const out: Candidate[] = [];
  for (const c of candidates) {
    if (c.edits.every((e) => e.content === e.original)) continue;
    // Identical edits from two strategies (a one-method class group and its body, say) are one candidate.
    const editsKey = createHash('sha256').update(JSON.stringify(c.edits.map((e) => [e.path, e.content]))).digest('hex');
    if (seen.has(c.id) || byEdits.has(editsKey)) continue;
    seen.add(c.id);
    byEdits.add(editsKey);
    out.push(c);
  }
  return out;
}
