/**
 * Shortcut probes against a task's starting tree, run inside the strict sandbox an agent would get: can the deleted
 * code be read back from anything there? Every object git holds (history, packs, dangling objects) is decompressed
 * and every file of the workspace — tracked, untracked and ignored — is searched for each removed line; a removed
 * line found anywhere except in the task's own tracked files is a leak. History is probed too: the repository must
 * hold one commit and no other ref.
 */
import type { SandboxSession } from '../harness/sandbox/sandbox.ts';

/** Removed lines worth probing for: long enough to be specific, not just brackets or keywords. */
export function probeLines(removedCode: string): string[] {
  const out = new Set<string>();
  for (const raw of removedCode.split('\n')) {
    const line = raw.trim();
    if (line.length < 12) continue;
    if (!/[A-Za-z0-9_]{3}/.test(line)) continue;
    if (/^(?:\/\/|#|\*|\/\*)/.test(line) && line.length < 24) continue;
    out.add(line);
  }
  return [...out];
}

/** The `-` lines of a unified patch (the code a removal patch takes away). */
export function removedLinesOfPatch(patch: string): string {
  return patch
    .split('\n')
    .filter((l) => l.startsWith('-') && !l.startsWith('---'))
    .map((l) => l.slice(1))
    .join('\n');
}

export interface LeakProbeResult {
  ok: boolean;
  /** Removed lines found outside the task's own files. */
  leaked: string[];
  /** Commits reachable from any ref (must be 1). */
  commits: number;
  refs: string[];
  problems: string[];
}

/** Paths of derived artefacts (bytecode, build output, caches, maps, coverage): a removed line found there is a leak. */
export const DERIVED_PATH_REGEX = String.raw`(^|/)(__pycache__|\.mypy_cache|\.pyright|\.ruff_cache|\.pytest_cache|dist|build|coverage|\.nyc_output|target)/|\.(pyc|pyo|tsbuildinfo|map|class)$|(^|/)\.coverage$`;

const PROBE = String.raw`
set -u
P=/tmp/.fw-probe-patterns
cat > "$P"
# Lines present in the task's own tracked source files are not leaks (derived artefacts do not count as source).
# A task tree holds only tracked files, so a node_modules in it is the environment's layer: the environment probe
# searches it by content (one common line in a dependency is not the answer; a copy of the deleted code is).
git ls-files -z | grep -zvE '${DERIVED_PATH_REGEX}' | xargs -0 -r cat -- 2>/dev/null | grep -aohF -f "$P" | sort -u > /tmp/.fw-probe-own || true
{
  git cat-file --batch-all-objects --batch 2>/dev/null
  find . -path ./.git -prune -o -name node_modules -prune -o -type f -print0 | xargs -0 -r cat -- 2>/dev/null
  find .git -type f ! -path '.git/objects/*' -print0 | xargs -0 -r cat -- 2>/dev/null
} | grep -aohF -f "$P" | sort -u > /tmp/.fw-probe-all || true
echo "@@leaks"
comm -13 /tmp/.fw-probe-own /tmp/.fw-probe-all
echo "@@commits"
git rev-list --all 2>/dev/null | wc -l
echo "@@refs"
git for-each-ref --format='%(refname)' 2>/dev/null
git stash list 2>/dev/null
echo "@@end"
`;

/**
 * @example
 * const probe = await probeLeaks(session, removedLinesOfPatch(removalPatch));
 * if (!probe.ok) reject('leak-found', probe.leaked.join('\n'));
 */
export async function probeLeaks(session: SandboxSession, removedCode: string): Promise<LeakProbeResult> {
  const lines = probeLines(removedCode);
  const r = await session.exec(PROBE, { stdin: `${lines.join('\n')}\n`, timeoutMs: 120_000 });
  const section = (name: string): string[] => {
    const m = new RegExp(`@@${name}\\n([\\s\\S]*?)\\n?@@`).exec(r.stdout);
    return (m?.[1] ?? '').split('\n').map((s) => s.trim()).filter(Boolean);
  };
  const problems: string[] = [];
  if (!r.stdout.includes('@@end')) problems.push(`probe did not finish (exit ${r.exitCode}): ${r.stderr.slice(-500)}`);
  const leaked = lines.length === 0 ? [] : section('leaks');
  const commits = Number(section('commits')[0] ?? 'NaN');
  const refs = section('refs');
  if (!(commits <= 1)) problems.push(`history holds ${Number.isNaN(commits) ? 'an unknown number of' : commits} commits`);
  if (refs.length > 1) problems.push(`more than one ref: ${refs.join(', ')}`);
  if (leaked.length > 0) problems.push(`removed code readable in the sandbox: ${leaked.slice(0, 3).join(' | ')}`);
  return { ok: problems.length === 0, leaked, commits, refs, problems };
}
