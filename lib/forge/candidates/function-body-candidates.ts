/**
 * Strategy `function-body`: one function or method keeps its signature (and docs) and its body becomes a
 * "not implemented" error. Constructors, abstract/overload declarations and trivial bodies are not candidates.
 */
import type { Candidate, CandidateLanguage } from '../candidate.ts';
import type { SourceOutline } from '../parse/source-outline.ts';
import type { ReturnTypeLookup } from './infer-return-types.ts';
import { symbolProfile } from './candidate-profile.ts';
import { applySplices, makeCandidate } from './make-candidate.ts';
import { bodyReplacement, isDeclarationOnly, isTrivialBody } from './replace-body.ts';
import { symbolContext } from './symbol-context.ts';

export function functionBodyCandidates(outline: SourceOutline, returnTypes?: ReturnTypeLookup): Candidate[] {
  const out: Candidate[] = [];
  for (const s of outline.symbols) {
    if (s.kind === 'class' || !s.body || isTrivialBody(outline, s) || isDeclarationOnly(s)) continue;
    const splices = bodyReplacement(outline, s, returnTypes);
    if (splices.length === 0) continue;
    out.push(
      makeCandidate({
        strategy: 'function-body',
        language: outline.language as CandidateLanguage,
        label: `${outline.path}-${s.qualifiedName}`,
        symbols: [`${outline.path}#${s.qualifiedName}`],
        edits: [{ path: outline.path, original: outline.text, content: applySplices(outline.text, splices) }],
        context: symbolContext([s]),
        profile: symbolProfile(outline, s, splices),
      }),
    );
  }
  return out;
}
