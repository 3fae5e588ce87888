/**
 * Applying a candidate to a checked-out tree and taking it back. Both refuse a tree whose files are not what the
 * candidate expects (its `original` for apply, its `content` for revert), so a stale tree is never half-edited.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { ValidationError } from '../../errors.ts';
import type { Candidate } from '../candidate.ts';

function inside(treeDir: string, path: string): string {
  const root = resolve(treeDir);
  const abs = resolve(root, path);
  if (!abs.startsWith(root + sep)) throw new ValidationError(`candidate path ${path} leaves the tree`, [{ path: 'edits.path', message: 'outside the tree' }]);
  return abs;
}

async function current(abs: string): Promise<string | null> {
  return readFile(abs, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
}

async function transition(treeDir: string, candidate: Candidate, direction: 'apply' | 'revert'): Promise<void> {
  const plan = candidate.edits.map((e) => ({ abs: inside(treeDir, e.path), path: e.path, from: direction === 'apply' ? e.original : e.content, to: direction === 'apply' ? e.content : e.original }));
  for (const p of plan) {
    const now = await current(p.abs);
    if (now !== p.from) throw new ValidationError(`cannot ${direction} ${candidate.id}: ${p.path} is not as the candidate expects`, [{ path: p.path, message: 'changed since the candidate was found' }]);
  }
  for (const p of plan) {
    if (p.to === null) await rm(p.abs, { force: true });
    else {
      await mkdir(dirname(p.abs), { recursive: true });
      await writeFile(p.abs, p.to);
    }
  }
}

/**
 * Writes the candidate's edits into `treeDir` (deletes files whose new content is null).
 *
 * @example
 * await applyCandidate(checkout, candidate);
 * await stripLeftovers(checkout, candidate);
 */
export async function applyCandidate(treeDir: string, candidate: Candidate): Promise<void> {
  await transition(treeDir, candidate, 'apply');
}

/** Puts the original files back (the reference solution), undoing `applyCandidate`. */
export async function revertCandidate(treeDir: string, candidate: Candidate): Promise<void> {
  await transition(treeDir, candidate, 'revert');
}

/** The candidate's edits as `forge-git.ts` takes them: `{ path, content }`. */
export function candidateEdits(candidate: Candidate): Array<{ path: string; content: string | null }> {
  return candidate.edits.map((e) => ({ path: e.path, content: e.content }));
}

/** The reference edits (the originals back), for an oracle tree. */
export function referenceEdits(candidate: Candidate): Array<{ path: string; content: string | null }> {
  return candidate.edits.map((e) => ({ path: e.path, content: e.original }));
}

