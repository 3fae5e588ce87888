import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyCandidate } from '../../../lib/forge/candidates/apply-candidate.ts';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import { findLeftovers, stripLeftovers } from '../../../lib/forge/leftovers/strip-leftovers.ts';
import { gitSync } from '../../support/git-fixture.ts';
import { PY_REPO, TS_REPO, writeRepo } from './fixture-repos.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const exists = (p: string) => stat(p).then(() => true, () => false);

describe('stripLeftovers', () => {
  it('removes a stale .pyc holding the deleted function, and Python caches, but no source', async () => {
    const repo = await writeRepo(PY_REPO);
    dirs.push(repo);
    // A real interpreter run leaves bytecode of the module as it was.
    const env = { ...process.env };
    delete env.PYTHONDONTWRITEBYTECODE;
    delete env.PYTHONPYCACHEPREFIX;
    execFileSync('python3', ['-c', 'import pkg.shapes'], { cwd: repo, env });
    const pycs = (await readdir(join(repo, 'pkg/__pycache__'))).filter((f) => f.startsWith('shapes.'));
    expect(pycs).toHaveLength(1);
    const pyc = `pkg/__pycache__/${pycs[0]}`;
    expect((await readFile(join(repo, pyc))).includes('_square')).toBe(true);
    const caches: Array<[string, string]> = [['.pytest_cache/v/cache/lastfailed', '{}'], ['.mypy_cache/3.11/pkg/shapes.data.json', '{"names": ["area"]}'], ['.ruff_cache/0.1/x', 'x'], ['.coverage', 'sqlite']];
    for (const [path, text] of caches) {
      await mkdir(join(repo, path, '..'), { recursive: true });
      await writeFile(join(repo, path), text);
    }
    const candidate = (await findCandidates(repo, { strategies: ['function-body'] })).find((c) => c.symbols.includes('pkg/shapes.py#area'))!;
    await applyCandidate(repo, candidate);
    const { removed } = await stripLeftovers(repo, candidate);
    expect(removed).toEqual(expect.arrayContaining([pyc, '.pytest_cache/v/cache/lastfailed', '.mypy_cache/3.11/pkg/shapes.data.json', '.ruff_cache/0.1/x', '.coverage']));
    expect(removed.some((p) => p.endsWith('.py'))).toBe(false);
    expect(await exists(join(repo, 'pkg/__pycache__'))).toBe(false);
    expect(await exists(join(repo, '.mypy_cache'))).toBe(false);
    expect(await exists(join(repo, 'pkg/shapes.py'))).toBe(true);
    expect(await findLeftovers(repo, candidate)).toEqual([]);
  });

  it('removes a .tsbuildinfo, source maps, ignored build output and tracked output that names the removed code', async () => {
    const repo = await writeRepo({
      ...TS_REPO,
      '.gitignore': 'dist/\n',
      'build/tool.js': 'export const banner = "release tool";\n',
      'build/calc.js': 'export function add(a, b) {\n  const sum = a + b;\n  return round(sum);\n}\n',
    });
    dirs.push(repo);
    const leftovers: Record<string, string> = {
      'tsconfig.tsbuildinfo': JSON.stringify({ program: { fileNames: ['./src/calc.ts'], fileInfos: [{ version: '1', signature: 'export declare function add(a: number, b: number): number;' }] } }),
      'dist/calc.js': 'export function add(a, b) {\n  const sum = a + b;\n  return round(sum);\n}\n//# sourceMappingURL=calc.js.map\n',
      'dist/calc.js.map': JSON.stringify({ version: 3, sources: ['../src/calc.ts'], sourcesContent: [TS_REPO['src/calc.ts']], mappings: 'AAAA' }),
      'node_modules/.cache/babel/x.json': '{"code": "const sum = a + b;"}',
      '.eslintcache': '[]',
      'coverage/lcov.info': 'SF:src/calc.ts\nFN:4,add\n',
    };
    for (const [path, text] of Object.entries(leftovers)) {
      await mkdir(join(repo, path, '..'), { recursive: true });
      await writeFile(join(repo, path), text);
    }
    gitSync(repo, ['add', '-f', 'tsconfig.tsbuildinfo']);
    gitSync(repo, ['commit', '-q', '-m', 'tracked buildinfo']);
    const candidate = (await findCandidates(repo, { strategies: ['function-body'] })).find((c) => c.symbols.includes('src/calc.ts#add'))!;
    await applyCandidate(repo, candidate);
    const { removed } = await stripLeftovers(repo, candidate);
    expect(removed).toEqual(['.eslintcache', 'build/calc.js', 'coverage/lcov.info', 'dist/calc.js', 'dist/calc.js.map', 'node_modules/.cache/babel/x.json', 'tsconfig.tsbuildinfo']);
    expect(await readFile(join(repo, 'build/tool.js'), 'utf8')).toContain('release tool');
    expect(await readFile(join(repo, 'src/calc.ts'), 'utf8')).toContain("throw new Error('not implemented');");
    expect(await exists(join(repo, 'node_modules/dep/index.js'))).toBe(true);
  });

  it('outside git, keeps build-output files that carry no trace of the removed code', async () => {
    const repo = await writeRepo({ ...TS_REPO, 'out/other.js': 'export const x = 1;\n', 'out/calc.js': 'function add(a, b) { return a + b; }\n' }, { git: false });
    dirs.push(repo);
    const candidate = (await findCandidates(repo, { strategies: ['function-body'] })).find((c) => c.symbols.includes('src/calc.ts#add'))!;
    expect(await findLeftovers(repo, candidate)).toEqual(['out/calc.js']);
  });
});
