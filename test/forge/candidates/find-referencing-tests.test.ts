import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findReferencingTests } from '../../../lib/forge/candidates/find-referencing-tests.ts';
import { indexRepository } from '../../../lib/forge/parse/index-repository.ts';
import { writeRepo } from './fixture-repos.ts';

let repo: string;
beforeAll(async () => {
  repo = await writeRepo({
    'src/a.ts': "import { b } from './b.js';\nexport const a = () => b() + 1;\n",
    'src/b.ts': 'export function b(): number {\n  return 41;\n}\n',
    'src/c.ts': 'export function c(): number {\n  return 0;\n}\n',
    'src/index.ts': "export * from './a.ts';\n",
    'test/a.test.ts': "import { a } from '../src/index.ts';\n",
    'lib/core/__init__.py': 'from .engine import run\n',
    'lib/core/engine.py': 'from ..helpers import util\n\ndef run():\n    return util.go()\n',
    'lib/helpers/__init__.py': '',
    'lib/helpers/util.py': 'def go():\n    return 1\n',
    'lib/helpers/unused.py': 'def nope():\n    return 0\n',
    'lib/__init__.py': '',
    'tests/conftest.py': 'import lib.helpers.unused\n',
    'tests/test_core.py': 'from lib.core import run\n',
  });
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('findReferencingTests', () => {
  it('follows the import closure through re-exports and .js-for-.ts specifiers', async () => {
    const index = await indexRepository(repo);
    expect(await findReferencingTests(repo, { files: ['src/b.ts'] }, { index })).toEqual(['test/a.test.ts']);
    expect(await findReferencingTests(repo, { files: ['src/c.ts'] }, { index })).toEqual([]);
  });

  it('follows Python packages, relative imports and conftest.py', async () => {
    const index = await indexRepository(repo);
    expect(await findReferencingTests(repo, { files: ['lib/helpers/util.py'] }, { index })).toEqual(['tests/test_core.py']);
    // conftest.py is loaded for every test beside or below it.
    expect(await findReferencingTests(repo, { files: ['lib/helpers/unused.py'] }, { index })).toEqual(['tests/conftest.py', 'tests/test_core.py']);
  });
});
