import { describe, expect, it } from 'vitest';
import { junitCaseId, TestOutcomeIndex, testIdKey } from '../../../lib/harness/grading/test-id.ts';
import { fileFromId } from '../../../lib/forge/test-files-of.ts';

describe('test ids keep titles whole', () => {
  it('splits only the file or module part on / and .: the titles a.b and a/b of one file are two tests', () => {
    expect(testIdKey('src/url.test.ts > withHttp > a.b')).toBe('src/url/test/withHttp/a.b');
    expect(testIdKey('src/url.test.ts > withHttp > a/b')).toBe('src/url/test/withHttp/a/b');
    expect(testIdKey('src/url.test.ts > withHttp > a.b')).not.toBe(testIdKey('src/url.test.ts > withHttp > a/b'));
    expect(testIdKey('src/url.test.ts > keeps x.ts and v1.2')).toBe('src/url/test/keeps x.ts and v1.2');
    expect(testIdKey('tests/test_calc.py::TestAdd::test_neg[1-2.5/x]')).toBe('tests/test_calc/TestAdd/test_neg[1-2.5/x]');
    expect(testIdKey('test_neg[a::b > c]')).toBe('test_neg[a::b > c]');
    // A title holding `#` stays whole after the file part.
    expect(testIdKey('src/a.test.ts > issue #12 works')).toBe('src/a/test/issue #12 works');
  });

  it('keeps every equivalence: pytest node id and JUnit classname + name, Java #, go suffix lookups', () => {
    const junit = junitCaseId({ classname: 'tests.test_calc.TestAdd', name: 'test_neg[1-2]' });
    expect(testIdKey(junit)).toBe(testIdKey('tests/test_calc.py::TestAdd::test_neg[1-2]'));
    expect(testIdKey('com.acme.CalcTest#adds')).toBe(testIdKey('com.acme.CalcTest.adds'));
    const index = new TestOutcomeIndex([
      { id: 'example.com/calc::TestAdd/negative', outcome: 'failed' },
      { id: 'src/url.test.ts > withHttp > a.b', outcome: 'passed' },
      { id: 'src/url.test.ts > withHttp > a/b', outcome: 'failed' },
      { id: 'tests.test_calc.TestAdd::test_neg[1-2]', outcome: 'passed' },
    ]);
    expect(index.size).toBe(4);
    expect(index.lookup('TestAdd/negative')).toBe('failed');
    expect(index.lookup('example.com/calc::TestAdd/negative')).toBe('failed');
    expect(index.lookup('src/url.test.ts > withHttp > a.b')).toBe('passed');
    expect(index.lookup('src/url.test.ts > withHttp > a/b')).toBe('failed');
    expect(index.lookup('tests/test_calc.py::TestAdd::test_neg[1-2]')).toBe('passed');
  });

  it('matches a go test written without its package whatever its subtest holds, and keeps [folders] in paths', () => {
    const index = new TestOutcomeIndex([
      { id: 'example.com/calc::TestParse/1.5', outcome: 'failed' },
      { id: 'example.com/calc::TestAdd/#00', outcome: 'passed' },
      { id: 'src/routes/[slug]/page.test.ts > renders', outcome: 'passed' },
    ]);
    expect(index.lookup('TestParse/1.5')).toBe('failed');
    expect(index.lookup('TestAdd/#00')).toBe('passed');
    expect(index.lookup('src/routes/[slug]/page.test.ts::renders')).toBe('passed');
    expect(testIdKey('src/routes/[slug]/page.test.ts > renders')).toBe('src/routes/[slug]/page/test/renders');
  });

  it('falls back to the split titles only when the whole ones match nothing: a JUnit name with a dot, in classname.name form', () => {
    const index = new TestOutcomeIndex([
      { id: junitCaseId({ classname: 'com.acme.CalcTest', name: 'adds 1.5' }), outcome: 'failed' },
      { id: 'src/a.test.ts > x > a.b', outcome: 'passed' },
      { id: 'src/a.test.ts > x > a/b', outcome: 'failed' },
    ]);
    expect(index.lookup('com.acme.CalcTest.adds 1.5')).toBe('failed');
    // Whole titles still tell a.b from a/b: no fallback when one matches.
    expect(index.lookup('src/a.test.ts > x > a.b')).toBe('passed');
    expect(index.lookup('src/a.test.ts > x > nothing')).toBe('missing');
  });

  it('takes a test file from the first part of an id only', () => {
    expect(fileFromId('src/url.test.ts > withHttp > keeps a.b/c.ts > x')).toBe('src/url.test.ts');
    expect(fileFromId('tests/test_a.py::TestX::test_y[a.py::b]')).toBe('tests/test_a.py');
    expect(fileFromId('withHttp > handles x.test.ts > y')).toBeUndefined();
    expect(fileFromId('test::fixture.py::x')).toBeUndefined();
    expect(fileFromId('plain name.ts')).toBeUndefined();
    // vitest's JUnit reporter: the file is the classname.
    expect(fileFromId('src/url.test.ts::withHttp > a.b')).toBe('src/url.test.ts');
    expect(fileFromId('example.com/calc::TestAdd')).toBeUndefined();
  });
});
