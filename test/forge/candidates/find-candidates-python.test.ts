import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCandidate } from '../../../lib/forge/candidates/apply-candidate.ts';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { parsePython } from '../../../lib/forge/parse/parse-python.ts';
import { PY_REPO, writeRepo } from './fixture-repos.ts';

let repo: string;
let candidates: Candidate[];

beforeAll(async () => {
  repo = await writeRepo(PY_REPO);
  candidates = await findCandidates(repo);
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

const find = (strategy: string, symbol: string) => candidates.find((c) => c.strategy === strategy && c.symbols.includes(symbol));

/** Runs Python in a copy of the repository with the candidate applied. */
async function runWith(candidate: Candidate, code: string): Promise<string> {
  const tree = await mkdtemp(join(tmpdir(), 'forge-py-'));
  try {
    await cp(repo, tree, { recursive: true });
    await applyCandidate(tree, candidate);
    return execFileSync('python3', ['-c', code], { cwd: tree, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } }).toString().trim();
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

describe('findCandidates on Python', () => {
  it('finds every strategy, skips tests, __init__.py and .venv, and every edit parses', async () => {
    expect([...new Set(candidates.map((c) => c.strategy))].sort()).toEqual(['class', 'file', 'function-body', 'function-group']);
    const touched = new Set(candidates.flatMap((c) => c.files));
    expect([...touched].some((f) => f.startsWith('tests/') || f.startsWith('.venv/') || f.endsWith('__init__.py'))).toBe(false);
    const dir = await mkdtemp(join(tmpdir(), 'forge-parse-'));
    try {
      const files = [];
      for (const [i, c] of candidates.entries())
        for (const [j, e] of c.edits.entries()) {
          if (e.content === null) continue;
          const absPath = join(dir, `${i}-${j}.py`);
          await writeFile(absPath, e.content);
          files.push({ path: `${i}-${j}.py`, absPath, text: e.content });
        }
      const outlines = await parsePython(files);
      expect(outlines.length).toBeGreaterThan(5);
      expect(outlines.filter((o) => o.error)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('replaces a body by raise NotImplementedError, keeping the signature and docstring', async () => {
    const c = find('function-body', 'pkg/shapes.py#area')!;
    expect(c.edits[0]!.content).toContain('def area(r: float) -> float:\n    """Area of a circle of radius r."""\n    raise NotImplementedError\n');
    expect(c.context).toMatchObject({ signatures: ['def area(r: float) -> float:'], docComments: ['Area of a circle of radius r.'], relatedTests: ['tests/test_shapes.py'] });
    expect(await runWith(c, 'from pkg.shapes import area\ntry:\n    area(1)\nexcept NotImplementedError:\n    print("raised")')).toBe('raised');
    const oneLiner = find('function-body', 'pkg/shapes.py#one')!;
    expect(oneLiner.edits[0]!.content).toContain('def one(x): raise NotImplementedError\n');
  });

  it('reduces a class to its decorated declaration, fields and public method stubs', async () => {
    const c = find('class', 'pkg/shapes.py#Circle')!;
    expect(c.edits[0]!.content).toContain(
      '@dataclass\nclass Circle:\n    """A circle."""\n    r: float = 1.0\n\n    @property\n    def diameter(self) -> float:\n        """Twice the radius."""\n        raise NotImplementedError\n',
    );
    expect(c.edits[0]!.content).not.toContain('_hidden');
    expect(await runWith(c, 'from pkg.shapes import Circle\nc = Circle(3)\nprint(c.r)\ntry:\n    c.diameter\nexcept NotImplementedError:\n    print("raised")')).toBe('3\nraised');
  });

  it('groups an entry with its private helper, which is removed outright', () => {
    const c = find('function-group', 'pkg/shapes.py#area')!;
    expect(c.symbols).toEqual(['pkg/shapes.py#_square', 'pkg/shapes.py#area']);
    expect(c.edits[0]!.content).not.toContain('def _square');
    expect(c.edits[0]!.content).toContain('from pkg import util, other\n\n\ndef area(r: float) -> float:');
  });

  it('removes a file and rewrites the from-import that named it with others', () => {
    const c = find('file', 'pkg/other.py')!;
    const shapes = c.edits.find((e) => e.path === 'pkg/shapes.py')!;
    expect(shapes.content).toContain('\nfrom pkg import util\n');
    expect(shapes.content).not.toContain('other,');
    expect(c.edits.find((e) => e.path === 'pkg/other.py')!.content).toBeNull();
    const shapesFile = find('file', 'pkg/shapes.py')!;
    expect(shapesFile.files).toEqual(['pkg/shapes.py']);
  });

  it('without a usable python3, keeps Python files removable at the file level and says why', async () => {
    const before = process.env.FLYWHEEL_PYTHON;
    process.env.FLYWHEEL_PYTHON = '/nonexistent/python3';
    try {
      const skipped: string[] = [];
      const found = await findCandidates(repo, { onSkip: (path, reason) => skipped.push(`${path}: ${reason}`) });
      expect([...new Set(found.map((c) => c.strategy))]).toEqual(['file']);
      expect(found.map((c) => c.symbols[0]).sort()).toEqual(['pkg/other.py', 'pkg/shapes.py', 'pkg/util.py']);
      expect(skipped.some((s) => s.startsWith('pkg/shapes.py: not parsed (cannot run /nonexistent/python3'))).toBe(true);
    } finally {
      if (before === undefined) delete process.env.FLYWHEEL_PYTHON;
      else process.env.FLYWHEEL_PYTHON = before;
    }
  });
});
