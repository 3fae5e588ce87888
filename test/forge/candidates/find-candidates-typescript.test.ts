import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCandidate, revertCandidate } from '../../../lib/forge/candidates/apply-candidate.ts';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { parseTypeScript } from '../../../lib/forge/parse/parse-typescript.ts';
import { TS_REPO, writeRepo } from './fixture-repos.ts';

let repo: string;
let candidates: Candidate[];

beforeAll(async () => {
  repo = await writeRepo(TS_REPO);
  candidates = await findCandidates(repo);
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

const find = (strategy: string, symbol: string) => candidates.find((c) => c.strategy === strategy && c.symbols.includes(symbol));

/** Semantic diagnostics of the repository's TypeScript after a candidate's edits (the repository's own tsconfig). */
async function typeErrors(candidate: Candidate): Promise<string[]> {
  const tree = await mkdtemp(join(tmpdir(), 'forge-tc-'));
  try {
    await cp(repo, tree, { recursive: true });
    await applyCandidate(tree, candidate);
    const config = ts.getParsedCommandLineOfConfigFile(join(tree, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    const program = ts.createProgram(config!.fileNames, config!.options);
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

describe('findCandidates on TypeScript', () => {
  it('finds every strategy on the source files, and leaves tests, generated and vendored files alone', () => {
    const strategies = new Set(candidates.map((c) => c.strategy));
    expect([...strategies].sort()).toEqual(['class', 'file', 'function-body', 'function-group']);
    const touched = new Set(candidates.flatMap((c) => c.files));
    expect(touched.has('test/calc.test.ts')).toBe(false);
    expect(touched.has('src/generated.ts')).toBe(false);
    expect([...touched].some((f) => f.startsWith('node_modules/'))).toBe(false);
    expect(candidates.every((c) => c.edits.every((e) => e.content === null || parseTypeScript(e.path, e.content).error === undefined))).toBe(true);
  });

  it('replaces a function body by a not-implemented error, keeping signature and docs, and the module still loads', async () => {
    const c = find('function-body', 'src/calc.ts#add')!;
    expect(c).toBeDefined();
    const edited = c.edits[0]!.content!;
    expect(edited).toContain("/** Adds two numbers, rounded to cents. */\nexport function add(a: number, b: number): number {\n  throw new Error('not implemented');\n}");
    expect(edited).not.toContain('const sum = a + b;');
    expect(c.context.signatures).toEqual(['export function add(a: number, b: number): number']);
    expect(c.context.docComments).toEqual(['/** Adds two numbers, rounded to cents. */']);
    const tree = await mkdtemp(join(tmpdir(), 'forge-run-'));
    try {
      await cp(repo, tree, { recursive: true });
      await applyCandidate(tree, c);
      const out = execFileSync(process.execPath, ['-e', `import('${join(tree, 'src/calc.ts')}').then((m) => { try { m.add(1, 2); } catch (e) { console.log(e.message); } console.log(m.mul(2, 3)); })`]).toString();
      expect(out.trim().split('\n')).toEqual(['not implemented', '6']);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('gives an un-annotated arrow its inferred return type, so callers still type-check', async () => {
    const c = find('function-body', 'src/calc.ts#mul')!;
    expect(c.edits[0]!.content).toContain("export const mul = (a: number, b: number): number => {\n  throw new Error('not implemented');\n};");
    expect(await typeErrors(c)).toEqual([]);
  });

  it('writes a return type from a module the file does not import as an import type', async () => {
    const c = find('function-body', 'src/use.ts#origin')!;
    expect(c.edits[0]!.content).toContain('export function origin(): import("./shapes.ts").Point {');
    expect(await typeErrors(c)).toEqual([]);
  });

  it('reduces a class to a stub that keeps its public interface and type-checks', async () => {
    const c = find('class', 'src/calc.ts#Counter')!;
    const edited = c.edits[0]!.content!;
    expect(edited).toContain(
      "export class Counter {\n  label!: string;\n  step!: number;\n  constructor(start: number) { throw new Error('not implemented'); }\n  /** Adds to the total and returns it. */\n  add(n: number): number { throw new Error('not implemented'); }\n}",
    );
    expect(edited).not.toContain('private current');
    expect(edited).not.toContain('this.total += n;');
    expect(c.symbols).toEqual(['src/calc.ts#Counter', 'src/calc.ts#Counter.add', 'src/calc.ts#Counter.current']);
    expect(await typeErrors(c)).toEqual([]);
  });

  it('keeps a derived class stub type-checking although its constructor never reaches super()', async () => {
    const c = find('class', 'src/shapes.ts#Dot')!;
    expect(c.edits[0]!.content).toContain(
      "export class Dot extends Shape {\n  // @ts-expect-error the stub throws before calling super()\n  constructor(readonly at: Point) { throw new Error('not implemented'); }\n  /** Distance from the origin. */\n  norm(): number { throw new Error('not implemented'); }\n}",
    );
    expect(await typeErrors(c)).toEqual([]);
  });

  it('groups a function with its in-file callees: the private helper goes, the entry keeps its signature', async () => {
    const c = find('function-group', 'src/calc.ts#twice')!;
    expect(c.symbols).toEqual(['src/calc.ts#scale', 'src/calc.ts#twice']);
    const edited = c.edits[0]!.content!;
    expect(edited).not.toContain('function scale');
    expect(edited).toContain("export function twice(x: number): number {\n  throw new Error('not implemented');\n}");
    expect(await typeErrors(c)).toEqual([]);
    const methods = find('function-group', 'src/calc.ts#Counter.add')!;
    expect(methods.symbols).toEqual(['src/calc.ts#Counter.add', 'src/calc.ts#Counter.current']);
  });

  it('removes a file and the imports of it in other sources, never in tests', () => {
    const c = find('file', 'src/util.ts')!;
    const byPath = Object.fromEntries(c.edits.map((e) => [e.path, e]));
    expect(byPath['src/util.ts']!.content).toBeNull();
    expect(Object.keys(byPath).sort()).toEqual(['src/calc.ts', 'src/main.ts', 'src/util.ts']);
    expect(byPath['src/calc.ts']!.content!.startsWith("\n/** Adds two numbers")).toBe(true);
    expect(byPath['src/main.ts']!.content).toBe(TS_REPO['src/main.ts']!.replace("import { round } from './util.ts';\n", ''));
    expect(c.context.signatures).toEqual(['export function round(x: number): number']);
  });

  it('ids are stable and unique; test files that reach a candidate are listed', async () => {
    const again = await findCandidates(repo);
    expect(again.map((c) => c.id)).toEqual(candidates.map((c) => c.id));
    expect(new Set(candidates.map((c) => c.id)).size).toBe(candidates.length);
    expect(candidates.every((c) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(c.id))).toBe(true);
    expect(find('function-body', 'src/calc.ts#add')!.context.relatedTests).toEqual(['test/calc.test.ts']);
    expect(find('function-body', 'src/lonely.ts#unused')!.context.relatedTests).toEqual([]);
    // Within a strategy, what a test reaches comes first.
    const bodies = candidates.filter((c) => c.strategy === 'function-body').map((c) => c.context.relatedTests!.length > 0);
    expect(bodies.indexOf(false)).toBeGreaterThan(0);
    expect(bodies.slice(bodies.indexOf(false)).every((reached) => !reached)).toBe(true);
  });

  it('respects include, exclude, strategies, languages, maxCandidates and requireTests', async () => {
    const onlyUtil = await findCandidates(repo, { include: ['src/util.ts'] });
    expect(onlyUtil.map((c) => c.strategy).sort()).toEqual(['file', 'function-body']);
    const noCalc = await findCandidates(repo, { exclude: ['src/**/calc.ts'] });
    expect(noCalc.some((c) => c.symbols.some((s) => s.startsWith('src/calc.ts')))).toBe(false);
    const files = await findCandidates(repo, { strategies: ['file'] });
    expect(files.every((c) => c.strategy === 'file')).toBe(true);
    expect(await findCandidates(repo, { languages: ['python'] })).toEqual([]);
    const capped = await findCandidates(repo, { maxCandidates: 4 });
    expect(capped.map((c) => c.strategy)).toEqual(['function-body', 'class', 'function-group', 'file']);
    const tested = await findCandidates(repo, { requireTests: true });
    expect(tested.some((c) => c.files.includes('src/lonely.ts'))).toBe(false);
    expect(tested.length).toBeGreaterThan(0);
  });

  it('applies and reverts a candidate, refusing a tree that changed', async () => {
    const c = find('file', 'src/util.ts')!;
    const tree = await mkdtemp(join(tmpdir(), 'forge-apply-'));
    try {
      await cp(repo, tree, { recursive: true });
      await applyCandidate(tree, c);
      await expect(readFile(join(tree, 'src/util.ts'), 'utf8')).rejects.toThrow(/ENOENT/);
      await expect(applyCandidate(tree, c)).rejects.toThrow(/not as the candidate expects/);
      await revertCandidate(tree, c);
      expect(await readFile(join(tree, 'src/util.ts'), 'utf8')).toBe(TS_REPO['src/util.ts']);
      expect(await readFile(join(tree, 'src/main.ts'), 'utf8')).toBe(TS_REPO['src/main.ts']);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });
});
