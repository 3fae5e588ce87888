import { describe, expect, it } from 'vitest';
import { escapeRegExp } from '../../lib/shared/escape-reg-exp.ts';

describe('escapeRegExp', () => {
  it('matches the text literally, inside a class and with the u flag too', () => {
    const text = 'a.b*c+d?(e)[f]{g}|h^i$j\\k/l-m';
    expect(new RegExp(`^${escapeRegExp(text)}$`).test(text)).toBe(true);
    expect(new RegExp(`^${escapeRegExp(text)}$`, 'u').test(text)).toBe(true);
    expect(new RegExp(`^${escapeRegExp(text)}$`).test(text.replace('.', 'x'))).toBe(false);
    // In a class, `-` is a character, not a range.
    expect(new RegExp(`^[${escapeRegExp('a-c')}]+$`).test('b')).toBe(false);
    expect(new RegExp(`^[${escapeRegExp('a-c')}]+$`).test('a-c')).toBe(true);
  });
});
