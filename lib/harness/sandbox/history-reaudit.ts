/**
 * Strict mode, after the agent: did anything the agent could reach bring the task's history back (see
 * `HistoryReaudit`)? Finds the objects the workspace repository can read beyond the audited base tree, then asks the
 * trusted source repository which of them its history holds; a commit or tag of that history means history came back.
 *
 * Two ways to find the new objects. On an overlay workspace, the fast path reads the overlay's upper layer on the
 * host: every object the agent can have added is in a file there (the lower layers were audited before the attempt).
 * Otherwise (a copy workspace, or an upper layer that changes how the repository finds objects) every object is listed
 * inside the sandbox, since the agent controls the repository's config and the harness never runs git on it.
 *
 * @example
 * const r = await reauditHistory({ strict: layers.strict, sourceDir: layers.sourceDir, upper: disk.upper,
 *   overlay: true, realGitInside: base.realGitInside, runInternal, timeoutMs: 120_000 });
 * r.ok; r.method; // true, 'upper-layer'
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { git } from '../git/run-git.ts';
import type { ExecResult, HistoryReaudit } from './sandbox.ts';
import type { WorkspaceLayers } from './workspace-layers.ts';

/**
 * The object ids written to the overlay's upper layer (loose objects and pack indexes, read as files, without running
 * git on the agent's repository). Undefined when the upper layer changes how the repository finds objects (`.git`
 * replaced, a symlink, an alternates or `commondir` file), or when there is no upper layer: then the full listing
 * decides.
 */
/** The largest pack index the host reads itself (an index of about 2 million objects). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

async function objectsWrittenToUpper(upper: string | undefined): Promise<Set<string> | undefined> {
  if (!upper) return undefined;
  const upperGit = join(upper, '.git');
  const st = await lstat(upperGit).catch(() => undefined);
  if (!st) return new Set();
  if (!st.isDirectory()) return undefined;
  const ids = new Set<string>();
  for (const entry of await readdir(upperGit, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) return undefined;
    const rel = relative(upperGit, join(entry.parentPath, entry.name));
    if (/^(objects\/info\/(http-)?alternates|commondir)$/.test(rel)) return undefined;
    // A multi-pack index lets git read packs whose own .idx is not here: only the full listing sees every object.
    // (A .pack alone in the upper layer is a lower pack copied up when git freshened its time: the ids it holds are
    // the audited lower index's, and git reads no pack without an index.)
    if (/^objects\/pack\/multi-pack-index/.test(rel)) return undefined;
    if (!entry.isFile()) continue;
    const loose = /^objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/.exec(rel);
    if (loose) ids.add(`${loose[1]}${loose[2]}`);
    else if (/^objects\/pack\/[^/]+\.idx$/.test(rel)) {
      // An index is read into the harness's memory: a huge one is left to the listing inside the sandbox.
      if ((await stat(join(upperGit, rel))).size > MAX_INDEX_BYTES) return undefined;
      const index = await git(['show-index'], { input: await readFile(join(upperGit, rel)), allowFailure: true });
      if (index.code !== 0) return undefined;
      for (const line of index.stdout.split('\n')) {
        const id = line.split(' ')[1];
        if (id) ids.add(id);
      }
    }
  }
  return ids;
}

export async function reauditHistory(input: {
  strict: NonNullable<WorkspaceLayers['strict']>;
  /** The trusted source repository (its `.git` is asked, never the workspace's). */
  sourceDir: string;
  /** Whether the workspace is an overlay (then the upper layer may answer). */
  overlay: boolean;
  /** The overlay's upper layer on the host (the attempt's disk). */
  upper: string | undefined;
  /** Where the real git is inside the sandbox. */
  realGitInside: string;
  /** Runs one of the harness's own commands inside the sandbox. */
  runInternal: (script: string, timeoutMs: number) => Promise<ExecResult>;
  timeoutMs: number;
}): Promise<HistoryReaudit> {
  const { strict } = input;
  const started = Date.now();
  const problems: string[] = [];
  const fresh = new Set<string>();
  const fromUpper = input.overlay ? await objectsWrittenToUpper(input.upper) : undefined;
  if (fromUpper) {
    for (const id of fromUpper) if (id !== strict.rootCommit && !strict.allowedObjects.has(id)) fresh.add(id);
  } else {
    const script = [
      'export GIT_CONFIG_GLOBAL=/dev/null',
      `${input.realGitInside} cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' || exit 3`,
      'for f in objects/info/alternates objects/info/http-alternates; do [ -e ".git/$f" ] && echo "ALT $f"; done; exit 0',
    ].join('\n');
    const r = await input.runInternal(script, input.timeoutMs);
    if (r.exitCode !== 0) {
      problems.push(`cannot list the workspace repository's objects: ${(r.stderr.trim() || `exit ${r.exitCode ?? r.signal}`).slice(0, 300)}`);
    }
    for (const line of r.stdout.split('\n')) {
      if (line.startsWith('ALT ')) {
        problems.push(`${line.slice(4)} present: the repository reads objects from elsewhere`);
        continue;
      }
      const [id, type] = line.split(' ');
      if (!id || !type || id === strict.rootCommit || strict.allowedObjects.has(id)) continue;
      fresh.add(id);
    }
  }
  const recoveredHistory: string[] = [];
  let matchingLaterContent = 0;
  const sourceGit = join(input.sourceDir, '.git');
  if (fresh.size > 0 && (await stat(sourceGit).then(() => true, () => false))) {
    const known = await git(['--git-dir', sourceGit, 'cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      input: `${[...fresh].join('\n')}\n`,
      allowFailure: true,
    });
    for (const line of known.stdout.split('\n')) {
      const [id, type] = line.split(' ');
      if (!id || !type || type === 'missing') continue;
      if (type === 'commit' || type === 'tag') recoveredHistory.push(id);
      else matchingLaterContent++;
    }
  }
  if (recoveredHistory.length > 0) problems.push(`${recoveredHistory.length} commit/tag object(s) of the task's history readable after the attempt`);
  return {
    ok: problems.length === 0,
    newObjects: fresh.size,
    recoveredHistory,
    matchingLaterContent,
    problems,
    method: fromUpper ? 'upper-layer' : 'full-listing',
    durationMs: Date.now() - started,
  };
}
