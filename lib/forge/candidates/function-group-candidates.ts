/**
 * Strategy `function-group`: an entry function and the functions it calls in the same file (the intra-file call
 * graph, `this.x`/`self.x` calls between methods of one class included), 2 to 4 functions in all. The group's
 * public members keep their signatures with a "not implemented" body; its private helpers (not exported,
 * `_`-prefixed in Python, `private` methods) that nothing outside the group references are removed outright, so
 * the agent designs them again.
 */
import type { Candidate, CandidateLanguage } from '../candidate.ts';
import type { OutlineSymbol, SourceOutline } from '../parse/source-outline.ts';
import type { ReturnTypeLookup } from './infer-return-types.ts';
import { symbolProfile } from './candidate-profile.ts';
import { applySplices, makeCandidate, type Splice } from './make-candidate.ts';
import { bodyReplacement, isDeclarationOnly, isTrivialBody } from './replace-body.ts';
import { symbolContext } from './symbol-context.ts';

export const GROUP_MIN = 2;
export const GROUP_MAX = 4;

/** The in-file callees of a function: top-level functions by name, sibling methods through `this.x` / `self.x`. */
export function callees(outline: SourceOutline, fn: OutlineSymbol): OutlineSymbol[] {
  const fns = outline.symbols.filter((s) => s.kind !== 'class' && s.body);
  const out: OutlineSymbol[] = [];
  for (const ref of fn.references) {
    const target = ref.startsWith('this.')
      ? fns.find((s) => s.parent !== undefined && s.parent === fn.parent && s.name === ref.slice(5))
      : fns.find((s) => s.kind === 'function' && s.name === ref);
    if (target && target !== fn && !out.includes(target)) out.push(target);
  }
  return out;
}

function referencedOutside(outline: SourceOutline, s: OutlineSymbol, group: Set<OutlineSymbol>): boolean {
  const ref = s.kind === 'method' ? `this.${s.name}` : s.name;
  return outline.symbols.some((o) => !group.has(o) && o.kind !== 'class' && o.references.includes(ref));
}

/** Removes a whole declaration and the blank lines after it, so no gap of blank lines is left behind. */
function removal(text: string, span: { start: number; end: number }): Splice {
  let end = span.end;
  while (end < text.length && (text[end] === '\n' || (text[end] === '\r' && text[end + 1] === '\n'))) end += text[end] === '\r' ? 2 : 1;
  return { start: span.start, end: end === text.length ? span.end : end, text: '' };
}

export function functionGroupCandidates(outline: SourceOutline, returnTypes?: ReturnTypeLookup): Candidate[] {
  const fns = outline.symbols.filter((s) => s.kind !== 'class' && s.body && !isTrivialBody(outline, s) && !isDeclarationOnly(s));
  const out: Candidate[] = [];
  const seen = new Set<string>();
  for (const entry of fns) {
    const group = new Set<OutlineSymbol>([entry]);
    const queue = [entry];
    let tooBig = false;
    while (queue.length > 0 && !tooBig) {
      for (const c of callees(outline, queue.shift()!)) {
        if (group.has(c) || !fns.includes(c)) continue;
        group.add(c);
        queue.push(c);
        if (group.size > GROUP_MAX) tooBig = true;
      }
    }
    if (tooBig || group.size < GROUP_MIN) continue;
    const members = [...group].sort((a, b) => a.span.start - b.span.start);
    const key = members.map((m) => m.qualifiedName).join('\0');
    if (seen.has(key)) continue;
    seen.add(key);
    const splices: Splice[] = [];
    for (const m of members) {
      const removable = m !== entry && !m.exported && !referencedOutside(outline, m, group);
      splices.push(...(removable ? [removal(outline.text, m.span)] : bodyReplacement(outline, m, returnTypes)));
    }
    out.push(
      makeCandidate({
        strategy: 'function-group',
        language: outline.language as CandidateLanguage,
        label: `${outline.path}-${entry.qualifiedName}`,
        symbols: members.map((m) => `${outline.path}#${m.qualifiedName}`),
        edits: [{ path: outline.path, original: outline.text, content: applySplices(outline.text, splices) }],
        context: symbolContext(members),
        // Named after its entry, what a user calls, not after the first member in the file.
        profile: symbolProfile(outline, entry, splices),
      }),
    );
  }
  return out;
}
