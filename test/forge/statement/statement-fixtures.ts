/**
 * Repositories for the statement tests, shaped like the libraries the forge meets: a Python `src/` layout whose public
 * function calls a private helper, and a TypeScript class tested with vitest titles. The tests assert literal values
 * a statement must not copy.
 */
export const PY_SRC_REPO: Record<string, string> = {
  'src/textkit/__init__.py': 'from .paths import format_filename\n',
  'src/textkit/paths.py': `def _shorten(name, limit):
    head = name[: limit // 2]
    tail = name[-(limit // 2) :]
    return f"{head}...{tail}"


def format_filename(filename, shorten=False, limit=20):
    """Formats a filename for display, shortening long ones when asked.

    :param filename: the path to format.
    """
    base_name = filename.rsplit("/", 1)[-1]
    if shorten and len(base_name) > limit:
        return _shorten(base_name, limit)
    return base_name
`,
  'tests/test_paths.py': `from textkit.paths import format_filename


def test_shortens_long_paths():
    assert format_filename("/tmp/a_really_long_file_name_here.txt", shorten=True) == "a_really_l...e_here.txt"


def test_keeps_the_base_name():
    assert format_filename("/var/log/syslog") == "syslog"
`,
};

export const TS_CLASS_REPO: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'slugs', type: 'module', private: true }),
  'src/slugger.ts': `/** Turns titles into URL slugs, remembering the ones it gave out. */
export class Slugger {
  private seen = new Map<string, number>();

  /** The slug of a title; a repeated title gets a numbered suffix. */
  slug(title: string): string {
    const baseSlug = title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const count = this.seen.get(baseSlug) ?? 0;
    this.seen.set(baseSlug, count + 1);
    return count === 0 ? baseSlug : \`\${baseSlug}-\${count}\`;
  }
}
`,
  'test/slugger.test.ts': `import { describe, expect, it } from 'vitest';
import { Slugger } from '../src/slugger.ts';

describe('Slugger', () => {
  it('makes lowercase dashed slugs', () => {
    expect(new Slugger().slug('Hello World Again')).toBe('hello-world-again');
  });
  it('numbers repeated titles', () => {
    const slugger = new Slugger();
    slugger.slug('Intro');
    expect(slugger.slug('Intro')).toBe('intro-1');
  });
});
`,
};

export const PY_SRC_TESTS = ['tests/test_paths.py::test_shortens_long_paths', 'tests/test_paths.py::test_keeps_the_base_name'];
export const TS_CLASS_TESTS = ['test/slugger.test.ts > Slugger > makes lowercase dashed slugs', 'test/slugger.test.ts > Slugger > numbers repeated titles'];
