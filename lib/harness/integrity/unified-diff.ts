/**
 * The agent's diff as files with their added and removed lines (new-file line numbers for added lines), read with
 * the `parse-diff` package. Git's C-style quoting of unusual names (`"b/\303\274.py"`) is undone here.
 */
import parseDiff from 'parse-diff';

export interface DiffLine {
  /** Line number in the new file (added lines) or the old file (removed lines). */
  line: number;
  /** The line without its `+`/`-` marker. */
  text: string;
}

export interface DiffFile {
  /** The file's path after the change (before it, for a deletion). */
  path: string;
  /** The path before a rename. */
  oldPath?: string;
  status: 'added' | 'deleted' | 'modified' | 'renamed';
  added: DiffLine[];
  removed: DiffLine[];
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Decodes git's quoted-path escapes (`\303\274` → `ü`, `\t`, `\"`). */
export function unquoteGitPath(path: string): string {
  if (!path.includes('\\')) return path;
  const bytes: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === '\\' && i + 1 < path.length) {
      const oct = /^[0-7]{3}/.exec(path.slice(i + 1));
      if (oct) {
        bytes.push(parseInt(oct[0], 8));
        i += 3;
        continue;
      }
      const esc = ESCAPES[path[i + 1]!];
      if (esc !== undefined) {
        bytes.push(esc);
        i += 1;
        continue;
      }
    }
    bytes.push(...Buffer.from(ch, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * @example
 * for (const f of parseUnifiedDiff(diff)) for (const l of f.added) console.log(f.path, l.line, l.text);
 */
export function parseUnifiedDiff(diff: string): DiffFile[] {
  if (diff.trim() === '') return [];
  return parseDiff(diff).map((f) => {
    const from = f.from && f.from !== '/dev/null' ? unquoteGitPath(f.from) : undefined;
    const to = f.to && f.to !== '/dev/null' ? unquoteGitPath(f.to) : undefined;
    const added: DiffLine[] = [];
    const removed: DiffLine[] = [];
    for (const chunk of f.chunks) {
      for (const c of chunk.changes) {
        if (c.type === 'add') added.push({ line: c.ln, text: c.content.slice(1) });
        else if (c.type === 'del') removed.push({ line: c.ln, text: c.content.slice(1) });
      }
    }
    const status = f.new || from === undefined ? 'added' : f.deleted || to === undefined ? 'deleted' : from !== to ? 'renamed' : 'modified';
    return { path: (to ?? from)!, ...(status === 'renamed' ? { oldPath: from! } : {}), status, added, removed };
  });
}
