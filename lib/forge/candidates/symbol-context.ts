/**
 * The statement writer's view of removed symbols: signatures and doc comments, never bodies.
 */
import type { CandidateContext } from '../candidate.ts';
import type { OutlineSymbol } from '../parse/source-outline.ts';

export function symbolContext(symbols: OutlineSymbol[], relatedTests?: string[]): CandidateContext {
  const signatures: string[] = [];
  const docComments: string[] = [];
  for (const s of symbols) {
    signatures.push(s.signature);
    if (s.doc) docComments.push(s.doc);
    for (const m of s.members ?? []) {
      if (m.private || !m.stub) continue;
      // A member stub is its signature with a not-implemented body: show the signature part only.
      const head = m.stub.replace(/\s*\{\s*throw new Error\('not implemented'\);\s*\}$/, '').replace(/\s*raise NotImplementedError$/, '');
      signatures.push(head.trim());
    }
  }
  return { signatures, docComments, ...(relatedTests ? { relatedTests } : {}) };
}
