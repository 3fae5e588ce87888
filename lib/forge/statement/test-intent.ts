/**
 * A failing test's name read as an expectation, the way a person restates a test: `test_shortens_long_paths` on
 * `format_filename` reads "`format_filename` should shorten long paths". Pytest ids (`file::Class::test_x[p]`),
 * vitest/jest titles (`file > describe > title`), Go (`pkg::TestParseURL`) and plain names are understood.
 */

/** The words of a test's name, and of the groups (classes, `describe` blocks) around it. */
export interface TestIntent {
  id: string;
  /** The test's own name as words: `shortens long paths`. */
  phrase: string;
  /** Enclosing groups as words, outermost first: `format filename`. */
  groups: string[];
}

/** Splits an identifier into lower-case words (`test_parseURL2` → `test parse url2`), keeping free text as it is. */
export function identifierWords(name: string): string {
  if (/\s/.test(name.trim())) return name.trim().replace(/\s+/g, ' ');
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((w) => (/^[A-Z0-9]+$/.test(w) && w.length > 1 ? w : w.toLowerCase()))
    .join(' ');
}

function stripTestWord(words: string): string {
  return words.replace(/^(?:tests?|it|spec)\b\s*/i, '').replace(/\s*\b(?:tests?|spec)$/i, '').trim();
}

/**
 * The expectation a test id names.
 *
 * @example
 * testIntent('tests/test_utils.py::TestFormat::test_shortens_long_paths[x]');
 * // { id, phrase: 'shortens long paths', groups: ['format'] }
 */
export function testIntent(id: string): TestIntent {
  if (id.includes(' > ')) {
    const parts = id.split(' > ').slice(1).map((p) => p.trim());
    const title = parts.pop() ?? id;
    return { id, phrase: title, groups: parts };
  }
  const segments = id.includes('::') ? id.split('::').slice(1) : id.split(/[/.]/).filter(Boolean).slice(-1);
  const names = segments.map((s) => s.replace(/\[.*\]$/, '').replace(/\/.*$/, ''));
  const own = names.pop() ?? id;
  return { id, phrase: stripTestWord(identifierWords(own)), groups: names.map((n) => stripTestWord(identifierWords(n))).filter(Boolean) };
}

/** Verbs test names start with, in their base form (`returns` → `return`). */
const VERBS = new Set(
  'accept add allow append apply build cache call check clear close collect compare compute convert copy count create decode dedupe default delete detect display emit encode ensure escape expand extend fail fall filter find format generate give group handle ignore include inherit insert invoke join keep limit list load log lowercase make map mark match merge name normalize number open override parse pass prefer preserve print produce quote raise read receive recognize redirect reject remove render replace report reset resolve respect retry return round run sanitize save send set shorten show skip sort split start stop store strip support take throw track treat trim truncate update use validate wait warn work wrap write yield get'.split(' '),
);
const IRREGULAR: Record<string, string> = { does: 'do', is: 'be', has: 'have', are: 'be', goes: 'go' };

/** Words after which a leading `-s` word is a noun (`labels of`, `values and`), not a verb. */
const NOUN_FOLLOWERS = /^(?:of|for|in|on|and|or|with|from|to|are|were)$/i;
/** Finite verbs that are no noun's plural (`names`, `lists` and `counts` may be either). */
const FINITE = /^(?:keeps|returns|raises|throws|gives|makes|takes|works|fails|handles|accepts|rejects|ignores|preserves|produces|becomes|contains|equals|yields|uses|stays|remains|breaks|survives|wins|goes|gets)$/i;
const MODALS = /^(?:is|are|was|were|must|should|can|cannot|does|do|has|have|will|would|may|never)$/i;

/** The base form of a known verb's third person (`returns` → `return`, `copies` → `copy`). */
function knownThirdPerson(word: string): string | undefined {
  const w = word.toLowerCase();
  for (const [suffix, replacement] of [['ies', 'y'], ['es', ''], ['s', '']] as const) {
    if (w.endsWith(suffix) && VERBS.has(w.slice(0, -suffix.length) + replacement)) return w.slice(0, -suffix.length) + replacement;
  }
  return undefined;
}

function baseVerb(word: string, next: string | undefined): { verb: string; thirdPerson: boolean } | undefined {
  const w = word.toLowerCase();
  if (IRREGULAR[w]) return { verb: IRREGULAR[w], thirdPerson: true };
  if (VERBS.has(w)) return { verb: w, thirdPerson: false };
  const known = knownThirdPerson(w);
  if (known) return { verb: known, thirdPerson: true };
  // An unknown `-s` word leading a phrase is usually a verb (`evicts oldest`), unless a noun's follower comes next.
  if (/^[a-z]{3,}s$/.test(w) && !/(?:ss|us|is)$/.test(w) && next !== undefined && !NOUN_FOLLOWERS.test(next)) return { verb: /(?:sh|ch|x|z)es$/.test(w) ? w.slice(0, -2) : w.slice(0, -1), thirdPerson: true };
  return undefined;
}

/** True when a later word is a finite verb: the phrase is a sentence with its own subject (`capacity must be positive`). */
function hasOwnVerb(words: string[]): boolean {
  return words.slice(1, 5).some((w) => MODALS.test(w) || FINITE.test(w));
}

function dropLeading(phrase: string, words: string): string {
  const p = phrase.toLowerCase();
  const w = words.toLowerCase();
  return w && (p === w || p.startsWith(`${w} `)) ? phrase.slice(w.length).trim() : phrase;
}

/**
 * The test as a sentence about the subject: "`add` should add two numbers", "`area` should work when the radius is 0",
 * "`Circle` should behave as `tests/test_shapes.py::test_circle` checks" when the name says no more than the subject.
 *
 * @example
 * expectationSentence(testIntent('test/calc.test.ts > add > adds two numbers'), '`add`'); // '`add` should add two numbers'
 */
export function expectationSentence(intent: TestIntent, subject: string, subjectWords = ''): string {
  let phrase = intent.phrase.replace(/\s+/g, ' ').trim();
  for (const words of [subjectWords, ...intent.groups]) phrase = dropLeading(phrase, words);
  phrase = phrase.replace(/^(?:should|must|will)\s+/i, '');
  if (phrase === '') return `${subject} should behave as \`${intent.id}\` checks`;
  const words = phrase.split(' ');
  const [first = '', ...rest] = words;
  if (/^(?:can|cannot)$/i.test(first)) return `${subject} ${phrase}`;
  if (/^(?:never|always|not|only|also|still)$/i.test(first)) return `${subject} should ${phrase}`;
  const verb = baseVerb(first, rest[0]);
  if (verb?.thirdPerson || (verb && !hasOwnVerb(words))) return `${subject} should ${[verb.verb, ...rest].join(' ')}`;
  if (hasOwnVerb(words)) return `${subject}: ${phrase}`;
  if (/^(?:when|with|without|on|if|for|given|after|before|in|under|from)$/i.test(first)) return `${subject} should work ${phrase}`;
  return `${subject} should handle ${phrase}`;
}
