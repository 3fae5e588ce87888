/**
 * Test helpers for environments: small task trees, and a way to run a command against a resolved
 * `SandboxEnvironment` exactly as its fields say (binds read-only at their targets, masks covered by an empty
 * read-only tmpfs, workspace binds under the workspace, PATH and variables), in a private mount namespace.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SandboxEnvironment } from '../../../lib/harness/sandbox/sandbox.ts';

export function writeTree(dir: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const SETUP = `
set -e
while IFS='|' read -r kind src dst; do
  [ -z "$kind" ] && continue
  case "$kind" in
    bind) mkdir -p "$dst"; mount --bind "$src" "$dst"; mount -o remount,bind,ro "$dst" ;;
    mask) if [ -d "$dst" ]; then mount -t tmpfs -o ro,size=4k fw-mask "$dst"; fi ;;
  esac
done <<EOF_MOUNTS
$FW_MOUNTS
EOF_MOUNTS
cd "$FW_CWD"
exec /bin/bash -c "$FW_COMMAND"
`;

/** Runs `command` in `workspace` against `env`; the host's PATH is not inherited. */
export function runInEnvironment(env: SandboxEnvironment, workspace: string, command: string): { code: number | null; stdout: string; stderr: string } {
  const lines: string[] = [];
  for (const b of env.binds) lines.push(`bind|${b.source}|${b.target}`);
  for (const w of env.workspaceBinds ?? []) lines.push(`bind|${w.source}|${join(workspace, w.path)}`);
  for (const m of env.masks ?? []) lines.push(`mask||${m}`);
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', SETUP], {
    env: {
      PATH: [...env.pathDirs, '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
      HOME: workspace,
      LANG: 'C.UTF-8',
      ...(env.env ?? {}),
      FW_MOUNTS: lines.join('\n'),
      FW_CWD: workspace,
      FW_COMMAND: command,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
