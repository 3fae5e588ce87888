import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findReferencingTests, testsNaming, testsReaching } from '../../../lib/forge/candidates/find-referencing-tests.ts';
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

describe('testsNaming: which of the reaching tests are about the feature', () => {
  let pkg: string;
  beforeAll(async () => {
    // A package whose __init__ re-exports everything: every test reaches every module.
    pkg = await writeRepo({
      'src/shop/__init__.py': 'from .cart import Cart\nfrom .prices import discount, tax\n',
      'src/shop/cart.py': 'class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return sum(self.items)\n',
      'src/shop/prices.py': 'def _round(x):\n    return round(x, 2)\n\n\ndef discount(p, pct):\n    return _round(p * (100 - pct) / 100)\n\n\ndef tax(p):\n    return p * 1.2\n',
      'tests/test_cart.py': 'from shop import Cart\n\ndef test_total():\n    assert Cart().total() == 0\n',
      'tests/test_prices.py': 'from shop import discount\n\ndef test_discount():\n    assert discount(10, 50) == 5\n',
      'tests/test_tax.py': 'from shop import tax\n\ndef test_tax():\n    assert tax(10) == 12\n',
    });
  });
  afterAll(async () => {
    await rm(pkg, { recursive: true, force: true });
  });

  it('keeps the tests that name the entry point, its class for a private or dunder method, or the public callers of a private helper', async () => {
    const index = await indexRepository(pkg);
    const reaching = testsReaching(index, ['src/shop/prices.py']);
    expect(reaching).toEqual(['tests/test_cart.py', 'tests/test_prices.py', 'tests/test_tax.py']);
    expect(testsNaming(index, reaching, 'src/shop/prices.py#discount')).toEqual(['tests/test_prices.py']);
    expect(testsNaming(index, reaching, 'src/shop/cart.py#Cart.__init__')).toEqual(['tests/test_cart.py']);
    // `_round` is called by `discount` only: the tests about discount.
    expect(testsNaming(index, reaching, 'src/shop/prices.py#_round')).toEqual(['tests/test_prices.py']);
    // A file, or a name no reaching test spells, keeps the whole closure.
    expect(testsNaming(index, reaching, 'src/shop/prices.py')).toEqual(reaching);
    expect(testsNaming(index, reaching, 'src/shop/prices.py#surcharge')).toEqual(reaching);
  });
});
