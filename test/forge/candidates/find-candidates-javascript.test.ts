import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCandidates } from '../../../lib/forge/candidates/find-candidates.ts';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { writeRepo } from './fixture-repos.ts';

let repo: string;
let candidates: Candidate[];
const skipped: Array<[string, string]> = [];

beforeAll(async () => {
  repo = await writeRepo({
    'lib/math.js': `function helper(x) {
  return x * 3;
}

function total(xs) {
  return xs.map(helper).reduce((a, b) => a + b, 0);
}

module.exports = { total, helper };
`,
    'lib/index.js': "const math = require('./math');\nconst path = require('node:path');\nmodule.exports = { sum: (xs) => math.total(xs), base: path.sep };\n",
    'lib/broken.js': 'function (oops {\n',
    'cmd/main.go': 'package main\n\nfunc main() {}\n',
    'test/math.test.js': "const { total } = require('../lib/math');\n",
  });
  candidates = await findCandidates(repo, { onSkip: (path, reason) => skipped.push([path, reason]) });
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('findCandidates on CommonJS and other languages', () => {
  it('keeps a helper exported through module.exports (body replaced, not removed) in a group', () => {
    const group = candidates.find((c) => c.strategy === 'function-group')!;
    expect(group.symbols).toEqual(['lib/math.js#helper', 'lib/math.js#total']);
    const text = group.edits[0]!.content!;
    expect(text).toContain("function helper(x) {\n  throw new Error('not implemented');\n}");
    expect(text).toContain("function total(xs) {\n  throw new Error('not implemented');\n}");
  });

  it('removes a top-level require of a deleted file, and leaves other requires', () => {
    const file = candidates.find((c) => c.strategy === 'file' && c.symbols[0] === 'lib/math.js')!;
    expect(file.edits.find((e) => e.path === 'lib/index.js')!.content).toBe("const path = require('node:path');\nmodule.exports = { sum: (xs) => math.total(xs), base: path.sep };\n");
    expect(file.context.relatedTests).toEqual(['test/math.test.js']);
  });

  it('offers file removal for unparsed files and other languages, and says why symbols were skipped', () => {
    expect(candidates.find((c) => c.symbols[0] === 'lib/broken.js')?.strategy).toBe('file');
    expect(candidates.find((c) => c.symbols[0] === 'cmd/main.go')).toMatchObject({ strategy: 'file', language: 'any', edits: [{ path: 'cmd/main.go', content: null }] });
    expect(skipped).toHaveLength(1);
    expect(skipped[0]![0]).toBe('lib/broken.js');
    expect(skipped[0]![1]).toMatch(/^not parsed \(syntax error: .+\): file removal only$/);
  });
});
