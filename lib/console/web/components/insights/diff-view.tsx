/**
 * A unified diff (git patch) as a reviewer reads it: one block per file under its path (new, deleted or renamed
 * said so), hunk headers, added lines green and removed lines red, each with its sign. A diff cut by the API says how
 * much of it is shown.
 *
 * @example
 * <DiffView diff={detail.diff.text} truncated={detail.diff.truncated} bytes={detail.diff.bytes} />
 */
import { formatNumber } from '../format.ts';

export type DiffLineKind = 'add' | 'del' | 'context' | 'hunk' | 'meta';
export interface DiffFile {
  path: string;
  /** 'added', 'deleted', 'renamed from x', or '' for a change. */
  change: string;
  lines: Array<{ kind: DiffLineKind; text: string }>;
  added: number;
  removed: number;
}

/**
 * Splits a git patch into its files and classifies every line.
 *
 * @example
 * parseUnifiedDiff('diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n');
 * // [{ path: 'x.py', change: '', added: 1, removed: 1, lines: [hunk, del, add] }]
 */
export function parseUnifiedDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let inHunk = false;
  const start = (path: string) => {
    file = { path, change: '', lines: [], added: 0, removed: 0 };
    files.push(file);
    inHunk = false;
  };
  for (const line of diff.split('\n')) {
    const git = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (git) {
      start(git[2]!);
      continue;
    }
    if (!inHunk && line.startsWith('--- ')) {
      if (!file) start(line.slice(4).replace(/^a\//, ''));
      if (line === '--- /dev/null') file!.change = 'added';
      continue;
    }
    if (!inHunk && line.startsWith('+++ ')) {
      const path = line.slice(4).replace(/^b\//, '');
      if (path === '/dev/null') file!.change = 'deleted';
      else file!.path = path;
      continue;
    }
    if (!file) continue;
    if (line.startsWith('@@')) {
      inHunk = true;
      file.lines.push({ kind: 'hunk', text: line });
    } else if (!inHunk) {
      if (line.startsWith('new file')) file.change = 'added';
      else if (line.startsWith('deleted file')) file.change = 'deleted';
      else if (line.startsWith('rename from ')) file.change = `renamed from ${line.slice('rename from '.length)}`;
      else if (line.startsWith('Binary files')) file.lines.push({ kind: 'meta', text: line });
    } else if (line.startsWith('+')) {
      file.added++;
      file.lines.push({ kind: 'add', text: line });
    } else if (line.startsWith('-')) {
      file.removed++;
      file.lines.push({ kind: 'del', text: line });
    } else if (line.startsWith('\\')) {
      file.lines.push({ kind: 'meta', text: line });
    } else if (line !== '' || file.lines.length > 0) {
      file.lines.push({ kind: 'context', text: line });
    }
  }
  // A trailing empty context line is the patch's final newline, not content.
  for (const f of files) while (f.lines.length > 0 && f.lines[f.lines.length - 1]!.kind === 'context' && f.lines[f.lines.length - 1]!.text === '') f.lines.pop();
  return files;
}

const COLOURS: Record<DiffLineKind, { background?: string; color?: string }> = {
  add: { background: '#e6ffec', color: '#055d20' },
  del: { background: '#ffebe9', color: '#82071e' },
  hunk: { background: '#ddf4ff', color: '#0a3069' },
  meta: { color: '#6e7781' },
  context: {},
};

export function DiffView(props: { diff: string; truncated?: boolean; bytes?: number }) {
  const files = parseUnifiedDiff(props.diff);
  if (files.length === 0) return <p class="empty">The attempt changed no files.</p>;
  return (
    <div class="diff">
      <p class="muted">
        {files.length} file{files.length === 1 ? '' : 's'} changed, +{files.reduce((a, f) => a + f.added, 0)} −{files.reduce((a, f) => a + f.removed, 0)}
        {props.truncated ? ` (first part shown; the diff is ${formatNumber(props.bytes)} bytes)` : ''}
      </p>
      {files.map((f, i) => (
        <div class="diff-file" key={`${f.path}-${i}`}>
          <div class="diff-file-header" style={{ fontWeight: 'bold', background: '#f6f8fa', padding: '4px 8px', borderBottom: '1px solid #d0d7de' }}>
            {f.path}
            {f.change ? ` (${f.change})` : ''} <span class="muted">+{f.added} −{f.removed}</span>
          </div>
          <pre style={{ margin: 0, overflowX: 'auto' }}>
            {f.lines.map((l, j) => (
              <div key={j} class={`diff-line diff-${l.kind}`} style={COLOURS[l.kind]}>
                {l.text === '' ? ' ' : l.text}
              </div>
            ))}
          </pre>
        </div>
      ))}
    </div>
  );
}
