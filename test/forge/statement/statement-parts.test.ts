import { describe, expect, it } from 'vitest';
import type { Candidate } from '../../../lib/forge/candidate.ts';
import { docSentence } from '../../../lib/forge/statement/doc-sentence.ts';
import { mentionsName } from '../../../lib/forge/statement/hidden-evidence.ts';
import { deletionWording, editedPathsNamed } from '../../../lib/forge/statement/statement-problems.ts';
import { declaredName, isPublicSignature, statementSubject } from '../../../lib/forge/statement/statement-subject.ts';
import { forgeTemplateStatement } from '../../../lib/forge/statement/template-statement.ts';
import { expectationSentence, identifierWords, testIntent } from '../../../lib/forge/statement/test-intent.ts';

describe('test names read as expectations', () => {
  it('reads pytest, vitest and Go ids', () => {
    expect(testIntent('tests/test_utils.py::TestFormat::test_shortens_long_paths[a-b]')).toEqual({ id: 'tests/test_utils.py::TestFormat::test_shortens_long_paths[a-b]', phrase: 'shortens long paths', groups: ['format'] });
    expect(testIntent('test/url.test.ts > withHttp > keeps a/b.c paths whole')).toEqual({ id: 'test/url.test.ts > withHttp > keeps a/b.c paths whole', phrase: 'keeps a/b.c paths whole', groups: ['withHttp'] });
    expect(testIntent('pkg/url::TestParseURL').phrase).toBe('parse URL');
    expect(identifierWords('test_parseURLQuery2')).toBe('test parse URL query2');
  });

  it('turns the name into a sentence about the subject', () => {
    const say = (id: string, subject = '`format_filename`', words = 'format filename') => expectationSentence(testIntent(id), subject, words);
    expect(say('t.py::test_shortens_long_paths')).toBe('`format_filename` should shorten long paths');
    expect(say('t.py::test_format_filename_returns_base_name')).toBe('`format_filename` should return base name');
    expect(say('t.py::test_format_filename')).toBe('`format_filename` should behave as `t.py::test_format_filename` checks');
    expect(say('t.py::test_when_empty')).toBe('`format_filename` should work when empty');
    expect(say('t.py::test_unicode_names')).toBe('`format_filename` should handle unicode names');
    expect(say('t.ts > Slugger > can be reused', '`Slugger`', 'slugger')).toBe('`Slugger` can be reused');
    expect(say('t.ts > Slugger > should trim dashes', '`Slugger`', 'slugger')).toBe('`Slugger` should trim dashes');
  });
});

describe('docSentence', () => {
  it('takes the first sentence of JSDoc, docstrings and hash comments, without tags', () => {
    expect(docSentence('/**\n * Adds two numbers, e.g. prices. Rounded.\n * @param a first\n */')).toBe('Adds two numbers, e.g. prices.');
    expect(docSentence('Clamp x into [lo, hi]\n\n:param x: the value')).toBe('Clamp x into [lo, hi]');
    expect(docSentence('"""Formats a name.\n\n    Long text."""')).toBe('Formats a name.');
    expect(docSentence('/** @internal */')).toBeUndefined();
  });
});

describe('statementSubject', () => {
  const candidate = (over: Partial<Candidate>): Candidate => ({ id: 'x', strategy: 'function-group', language: 'typescript', symbols: [], files: [], edits: [], context: { signatures: [], docComments: [] }, ...over });

  it('tells public from private by export, modifiers and underscores', () => {
    expect(declaredName('/** Docs. */\n  private current(): number')).toBe('current');
    expect(declaredName('@property\n    def diameter(self) -> float:\n        """Twice."""')).toBe('diameter');
    expect(declaredName('constructor(start: number)')).toBeUndefined();
    expect(isPublicSignature('function scale(x: number)', 'typescript')).toBe(false);
    expect(isPublicSignature('export function twice(x: number)', 'typescript')).toBe(true);
    expect(isPublicSignature('#secret(): void', 'typescript')).toBe(false);
    expect(isPublicSignature('def __len__(self):', 'python')).toBe(true);
    expect(isPublicSignature('def _shorten(name, limit):', 'python')).toBe(false);
  });

  it('puts the ranking entry point first and keeps helpers out', () => {
    const group = candidate({ symbols: ['src/calc.ts#scale', 'src/calc.ts#twice'], context: { signatures: ['function scale(x: number)', 'export function twice(x: number)'], docComments: [] } });
    expect(statementSubject(group)).toEqual({ publicNames: ['twice'], privateNames: ['scale'], publicSignatures: ['export function twice(x: number)'] });
    const file = candidate({ strategy: 'file', language: 'python', symbols: ['pkg/shapes.py'], context: { signatures: ['def area(r):', 'def _square(x):', 'def diameter(self) -> float:', 'class Circle:'], docComments: [] }, profile: { entryPoint: 'pkg/shapes.py#Circle', isPublic: true, removedLines: 9, spans: [] } });
    expect(statementSubject(file)).toEqual({ publicNames: ['area', 'Circle'], privateNames: ['_square'], publicSignatures: ['def area(r):', 'class Circle:'] });
    const method = candidate({ strategy: 'function-body', symbols: ['src/a.ts#Box.size'], context: { signatures: ['size(): number'], docComments: [] }, profile: { entryPoint: 'src/a.ts#Box.size', isPublic: true, removedLines: 2, spans: [] } });
    expect(statementSubject(method).publicNames).toEqual(['Box.size']);
  });
});

describe('what a statement must not say', () => {
  it('finds the edit wording and the edited files, not ordinary prose', () => {
    expect(deletionWording('The class has been reduced to a stub; its body was removed and throws NotImplementedError.')).toEqual(['stub', 'reduced to', 'was removed', 'NotImplementedError']);
    expect(deletionWording('Support for shortening is not implemented yet; please add it. I expected the base name.')).toEqual([]);
    const c = { edits: [{ path: 'src/click/_compat.py', original: '', content: '' }] };
    expect(editedPathsNamed('see `_compat.py` and src/click/_compat.py', c)).toEqual(['src/click/_compat.py', '_compat.py']);
    expect(editedPathsNamed('tests/test_compat.py::test_x fails', c)).toEqual([]);
  });

  it('counts a plain-word helper name only where it is written as code', () => {
    expect(mentionsName('the scale of the chart', 'scale')).toBe(false);
    expect(mentionsName('`add` and then `scale` it', 'scale')).toBe(true);
    expect(mentionsName('`add` and the scale then `y`', 'scale')).toBe(false);
    expect(mentionsName('call scale(x)', 'scale')).toBe(true);
    expect(mentionsName('uses base_name here', 'base_name')).toBe(true);
    expect(mentionsName('Counter.current is wrong', 'Counter.current')).toBe(true);
  });
});

describe('forgeTemplateStatement (certification without a statement writer)', () => {
  it('names the public symbols and reads the tests, never the files or the edit', () => {
    const s = forgeTemplateStatement({ symbols: ['src/calc.ts#add', 'src/calc.ts#_round'], edits: [{ path: 'src/calc.ts' }], strategy: 'function-group' }, ['test/calc.test.ts > add > adds two numbers']);
    expect(s).toMatch(/^Calling `add` does not work/);
    expect(s).toContain('- `add` should add two numbers (`test/calc.test.ts > add > adds two numbers`)');
    expect(s).not.toMatch(/_round|src\/calc\.ts|missing|removed/);
    const file = forgeTemplateStatement({ symbols: ['src/util.ts'], edits: [{ path: 'src/util.ts' }], strategy: 'remove-file' }, ['t::x']);
    expect(file).toMatch(/^Some behaviour of the library does not work/);
    expect(file).not.toContain('src/util.ts');
  });
});

describe('test names that are sentences of their own', () => {
  it('keeps a sentence with its own verb, reads an unknown -s word as a verb, and a noun before "of" as a noun', () => {
    const say = (id: string) => expectationSentence(testIntent(id), '`LRUCache`', 'lru cache');
    expect(say('t.py::TestLRUCache::test_capacity_must_be_positive')).toBe('`LRUCache`: capacity must be positive');
    expect(say('t.py::TestLRUCache::test_update_keeps_size')).toBe('`LRUCache`: update keeps size');
    expect(say('t.py::TestLRUCache::test_evicts_oldest')).toBe('`LRUCache` should evict oldest');
    expect(say('t.py::TestLRUCache::test_get_default')).toBe('`LRUCache` should get default');
    expect(say('t.ts > labels of WWW.Example.com:8080')).toBe('`LRUCache` should handle labels of WWW.Example.com:8080');
    expect(say('t.ts > a.example.com is under example.com')).toBe('`LRUCache`: a.example.com is under example.com');
  });
});
