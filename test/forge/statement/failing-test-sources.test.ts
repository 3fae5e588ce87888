import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failingTestSources } from '../../../lib/forge/statement/failing-test-sources.ts';
import { writeRepo } from '../candidates/fixture-repos.ts';

let repo: string;
beforeAll(async () => {
  repo = await writeRepo({
    'tests/test_calc.py': 'import pytest\n\n\nclass TestAdd:\n    @pytest.mark.parametrize("a", [1, 2])\n    def test_neg(self, a):\n        assert add(-a, 0) == -a\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n',
    'test/calc.test.ts': "import { describe, it, expect } from 'vitest';\ndescribe('add', () => {\n  it('adds two numbers', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n});\n",
  });
});
afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
});

describe('failingTestSources', () => {
  it('finds pytest functions and methods, vitest titles, and leaves unknown ids bare', async () => {
    const tests = await failingTestSources(repo, ['tests/test_calc.py::TestAdd::test_neg[1]', 'tests/test_calc.py::test_zero', 'test/calc.test.ts > add > adds two numbers', 'pkg::TestGo', 'test/calc.test.ts > add > missing']);
    expect(tests).toEqual([
      { id: 'tests/test_calc.py::TestAdd::test_neg[1]', body: '    @pytest.mark.parametrize("a", [1, 2])\n    def test_neg(self, a):\n        assert add(-a, 0) == -a' },
      { id: 'tests/test_calc.py::test_zero', body: 'def test_zero():\n    assert add(0, 0) == 0' },
      { id: 'test/calc.test.ts > add > adds two numbers', body: "it('adds two numbers', () => {\n    expect(add(1, 2)).toBe(3);\n  })" },
      { id: 'pkg::TestGo' },
      { id: 'test/calc.test.ts > add > missing' },
    ]);
  });
});
