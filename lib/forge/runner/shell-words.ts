/**
 * A small shell tokenizer for test commands: words (with their unquoted value and their place in the text, so a
 * command can be edited without requoting it), `&&` and redirections. Anything it cannot take apart safely — pipes,
 * `;`, `||`, a lone `&`, subshells, command substitution, comments, unbalanced quotes — makes it refuse (undefined):
 * no package in the dependencies does this, and a wrong split would run a different command.
 */

export interface ShellWord {
  kind: 'word';
  /** The value after quote removal (`"$X/a b"` → `$X/a b`; parameters are not expanded). */
  value: string;
  start: number;
  end: number;
}

export interface ShellOperator {
  /** `and` for `&&`; `redirect` for `>`, `>>`, `<`, `2>&1`, `&>` with its target (one token). */
  kind: 'and' | 'redirect';
  start: number;
  end: number;
}

export type ShellToken = ShellWord | ShellOperator;

const REFUSED = new Set(['|', ';', '(', ')', '`', '\n', '\r']);

/**
 * The tokens of a command, or undefined when it holds what this tokenizer refuses.
 *
 * @example
 * shellTokens(`cd pkg && PYTHONPATH=src python3 -m pytest -q 'tests dir'`)?.map((t) => t.kind === 'word' ? t.value : t.kind);
 * // ['cd', 'pkg', 'and', 'PYTHONPATH=src', 'python3', '-m', 'pytest', '-q', 'tests dir']
 */
export function shellTokens(command: string): ShellToken[] | undefined {
  const tokens: ShellToken[] = [];
  let i = 0;
  const n = command.length;
  const isSpace = (c: string | undefined) => c === ' ' || c === '\t';
  /** Reads one word from i; undefined on a refused construct. */
  const readWord = (): ShellWord | undefined => {
    const start = i;
    let value = '';
    while (i < n) {
      const c = command[i]!;
      if (isSpace(c) || c === '>' || c === '<' || c === '&' || REFUSED.has(c)) break;
      if (c === '\\') {
        if (i + 1 >= n) return undefined;
        value += command[i + 1];
        i += 2;
      } else if (c === "'") {
        const close = command.indexOf("'", i + 1);
        if (close < 0) return undefined;
        value += command.slice(i + 1, close);
        i = close + 1;
      } else if (c === '"') {
        i++;
        for (;;) {
          if (i >= n) return undefined;
          const d = command[i]!;
          if (d === '"') break;
          if (d === '`' || (d === '$' && command[i + 1] === '(')) return undefined;
          if (d === '\\' && i + 1 < n && '"\\$`'.includes(command[i + 1]!)) {
            value += command[i + 1];
            i += 2;
          } else {
            value += d;
            i++;
          }
        }
        i++;
      } else {
        if (c === '$' && command[i + 1] === '(') return undefined;
        if (c === '#' && i === start) return undefined;
        value += c;
        i++;
      }
    }
    return { kind: 'word', value, start, end: i };
  };
  while (i < n) {
    const c = command[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (REFUSED.has(c)) return undefined;
    if (c === '&' && command[i + 1] === '&') {
      tokens.push({ kind: 'and', start: i, end: i + 2 });
      i += 2;
      continue;
    }
    if (c === '>' || c === '<' || (c === '&' && command[i + 1] === '>')) {
      const start = i;
      // An fd number written against the operator (`2>`) belongs to it.
      const prev = tokens.at(-1);
      const fdStart = prev?.kind === 'word' && prev.end === i && /^\d+$/.test(prev.value) ? tokens.pop()!.start : start;
      if (c === '&') i++;
      i++;
      if (command[i] === '>' || (c === '<' && command[i] === '<')) i++;
      if (command[i] === '&') {
        // `2>&1`: a descriptor, not a file.
        i++;
        while (i < n && /[0-9-]/.test(command[i]!)) i++;
      } else {
        while (isSpace(command[i])) i++;
        const target = readWord();
        if (!target || target.end === target.start) return undefined;
      }
      tokens.push({ kind: 'redirect', start: fdStart, end: i });
      continue;
    }
    if (c === '&') return undefined;
    const word = readWord();
    if (!word) return undefined;
    if (word.end === word.start) return undefined;
    tokens.push(word);
  }
  return tokens;
}

/**
 * The `&&`-separated parts of a token list.
 *
 * @example
 * andSegments(shellTokens('cd web && npx vitest run')!).length; // 2
 */
export function andSegments(tokens: readonly ShellToken[]): ShellToken[][] {
  const out: ShellToken[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'and') out.push([]);
    else out.at(-1)!.push(t);
  }
  return out;
}

/**
 * True for a `NAME=value` environment assignment word.
 *
 * @example
 * isAssignment({ kind: 'word', value: 'PYTHONPATH=src', start: 0, end: 14 }); // true
 */
export function isAssignment(word: ShellWord): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(word.value);
}
