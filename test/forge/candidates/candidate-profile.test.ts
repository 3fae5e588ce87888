import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { forgeTaskId } from '../../../lib/forge/certify-candidate.ts';
import { PROFILE_PY_REPO, PROFILE_TS_REPO, PY_REPO, writeRepo } from './fixture-repos.ts';

const repos: string[] = [];
let ts: Candidate[];
let py: Candidate[];
let pyBase: Candidate[];

beforeAll(async () => {
  const [tsRepo, pyRepo, pyBaseRepo] = await Promise.all([writeRepo(PROFILE_TS_REPO), writeRepo(PROFILE_PY_REPO), writeRepo(PY_REPO)]);
  repos.push(tsRepo, pyRepo, pyBaseRepo);
  [ts, py, pyBase] = await Promise.all([findCandidates(tsRepo), findCandidates(pyRepo), findCandidates(pyBaseRepo)]);
});
afterAll(async () => {
  await Promise.all(repos.map((r) => rm(r, { recursive: true, force: true })));
});

function pick(list: Candidate[], strategy: string, entryPoint: string): Candidate {
  const c = list.find((x) => x.strategy === strategy && x.profile?.entryPoint === entryPoint);
  if (!c) throw new Error(`no ${strategy} candidate for ${entryPoint}: ${list.map((x) => `${x.strategy} ${x.profile?.entryPoint}`).join('; ')}`);
  return c;
}

describe('candidate profiles', () => {
  it('gives every candidate a profile', () => {
    for (const c of [...ts, ...py, ...pyBase]) {
      expect(c.profile, c.id).toBeDefined();
      expect(c.profile!.spans.length, c.id).toBeGreaterThan(0);
    }
  });

  it("names a group after its entry, not its first member, and the task id after that entry", () => {
    const group = pick(ts, 'function-group', 'src/url.ts#withHttp');
    expect(group.symbols).toEqual(['src/url.ts#withProtocol', 'src/url.ts#withHttp']);
    expect(group.profile!.isPublic).toBe(true);
    expect(forgeTaskId('urls', group)).toMatch(/^urls\.function-group\.src-url\.ts-withHttp-[0-9a-f]{1,8}$/);
    const pyGroup = pick(pyBase, 'function-group', 'pkg/shapes.py#area');
    expect(pyGroup.symbols).toEqual(['pkg/shapes.py#_square', 'pkg/shapes.py#area']);
    // A candidate made by hand has no profile: its first symbol names it, as before.
    expect(forgeTaskId('r', { id: 'c-12345678', strategy: 'function-body', symbols: ['a.py#f'] })).toBe('r.function-body.a.py-f-12345678');
  });

  it('tells public API from private in TypeScript: exports, methods of exported classes, private and underscored members', () => {
    const isPublic = (entry: string) => pick(ts, 'function-body', entry).profile!.isPublic;
    expect(isPublic('src/url.ts#withHttp')).toBe(true);
    expect(isPublic('src/url.ts#Query.add')).toBe(true);
    expect(isPublic('src/url.ts#withProtocol')).toBe(false);
    expect(isPublic('src/url.ts#lowercaseHost')).toBe(false);
    expect(isPublic('src/url.ts#Query._raw')).toBe(false);
    expect(isPublic('src/url.ts#Query.encode')).toBe(false);
    expect(pick(ts, 'class', 'src/url.ts#Query').profile!.isPublic).toBe(true);
  });

  it('tells public API from private in Python: underscores on symbol, class and module, and __all__', () => {
    const isPublic = (entry: string) => pick(py, 'function-body', entry).profile!.isPublic;
    expect(isPublic('lib/core.py#listed')).toBe(true);
    expect(isPublic('lib/core.py#Box.scaled')).toBe(true);
    expect(isPublic('lib/core.py#unlisted')).toBe(false);
    expect(isPublic('lib/core.py#Box._peek')).toBe(false);
    expect(isPublic('lib/core.py#Crate.shifted')).toBe(false);
    expect(isPublic('lib/_compat.py#text_type')).toBe(false);
    // A private module's file removal is named after the file: it has no public export.
    expect(pick(py, 'file', 'lib/_compat.py').profile!.isPublic).toBe(false);
    // Without __all__, no underscore is public.
    expect(pick(pyBase, 'function-body', 'pkg/shapes.py#area').profile!.isPublic).toBe(true);
    expect(pick(pyBase, 'function-body', 'pkg/shapes.py#_square').profile!.isPublic).toBe(false);
  });

  it('counts removed statements: a one-liner is 1; comments, blank lines and docstrings do not count', () => {
    expect(pick(py, 'function-body', 'lib/core.py#unlisted').profile!.removedLines).toBe(1);
    expect(pick(pyBase, 'function-body', 'pkg/shapes.py#one').profile!.removedLines).toBe(1);
    expect(pick(ts, 'function-body', 'src/url.ts#withHttps').profile!.removedLines).toBe(1);
    expect(pick(py, 'function-body', 'lib/core.py#listed').profile!.removedLines).toBe(2);
    // withProtocol: a comment and two statements.
    expect(pick(ts, 'function-body', 'src/url.ts#withProtocol').profile!.removedLines).toBe(2);
    // The whole module: every line of code, its docstring and blank lines aside.
    expect(pick(py, 'file', 'lib/_compat.py').profile!.removedLines).toBe(3);
    expect(pick(py, 'file', 'lib/core.py').profile!.removedLines).toBe(17);
    // A class stub keeps its public signatures: only what goes counts (a field initializer, bodies, the private method).
    expect(pick(ts, 'class', 'src/url.ts#Query').profile!.removedLines).toBe(6);
  });

  it('records the deleted spans in the original text', async () => {
    const listed = pick(py, 'function-body', 'lib/core.py#listed');
    const text = listed.edits[0]!.original!;
    expect(listed.profile!.spans).toHaveLength(1);
    const [span] = listed.profile!.spans;
    expect(span!.path).toBe('lib/core.py');
    expect(text.slice(span!.start, span!.end)).toBe('    y = x + 1\n    return y');
    const group = pick(ts, 'function-group', 'src/url.ts#withHttp');
    const src = group.edits[0]!.original!;
    const deleted = group.profile!.spans.map((s) => src.slice(s.start, s.end));
    expect(deleted).toHaveLength(2);
    // withProtocol stays (withHttps, outside the group, calls it): its body goes, as the entry's does.
    expect(deleted[0]).toBe("{\n  // Strip any protocol, then put the wanted one in front.\n  const bare = input.replace(/^[a-z]+:\\/\\//i, '');\n  return protocol + bare;\n}");
    expect(deleted[1]).toBe("{\n  return withProtocol(input, 'http://');\n}");
    // A file removal deletes the whole file, and the import statements of it in its importers.
    const file = pick(pyBase, 'file', 'pkg/other.py#double');
    expect(file.profile!.spans.map((s) => [s.path, s.start])).toEqual([
      ['pkg/other.py', 0],
      ['pkg/shapes.py', file.edits.find((e) => e.path === 'pkg/shapes.py')!.original!.indexOf('from pkg import util, other')],
    ]);
  });

  it('names an identical sibling: the same body but for whitespace, literals and the function’s own names', () => {
    expect(pick(ts, 'function-body', 'src/url.ts#withHttps').profile!.identicalSibling).toBe('src/url.ts#withHttp');
    expect(pick(ts, 'function-body', 'src/url.ts#withHttp').profile!.identicalSibling).toBe('src/url.ts#withHttps');
    expect(pick(py, 'function-body', 'lib/core.py#Crate.shifted').profile!.identicalSibling).toBe('lib/core.py#Box.scaled');
    expect(pick(ts, 'function-body', 'src/url.ts#withProtocol').profile!.identicalSibling).toBeUndefined();
    expect(pick(py, 'function-body', 'lib/core.py#unlisted').profile!.identicalSibling).toBeUndefined();
    // `_peek` returns self.v as `scaled` starts to: a different body is no sibling.
    expect(pick(py, 'function-body', 'lib/core.py#Box._peek').profile!.identicalSibling).toBeUndefined();
  });
});
