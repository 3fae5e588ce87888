/**
 * bubblewrap builds a command's file system as the sandbox's unprivileged uid, so every bind source must be reachable
 * by that uid: each folder on its path searchable. Many are not — a toolchain under /root (0700), a sandbox root
 * inside a `mkdtemp` folder (0700). Their permissions are left alone; instead each attempt gets a private mount
 * namespace (held by a small process for the attempt's life) in which the unreachable sources are bind-mounted, by
 * root, under a searchable staging folder, and commands enter that namespace before bubblewrap runs. The sandbox
 * itself only ever sees what bubblewrap binds from there.
 *
 * A source is staged through its highest folder that can be reached: the child of the deepest unsearchable folder on
 * its path. So the sandbox root's folders (workspace, /tmp, base system) share one staged mount, and a toolchain under
 * /root shares another with its siblings.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

/** Where staged sources appear inside the attempt's mount namespace (a tmpfs there; an empty folder on the host). */
export const STAGE_ROOT = '/run/flywheel-sandbox';

export interface StagedSources {
  /** The path bubblewrap should bind for `source` (itself when it is reachable). */
  path(source: string): string;
  /** `/proc/<pid>/ns/mnt` of the holder; absent when nothing needed staging. */
  mountNamespace?: string;
  /** Ends the holder (its namespace goes when the last command in it ends). Idempotent. */
  release(): void;
}

async function searchable(dir: string, user: { uid: number; gid: number }): Promise<boolean> {
  const st = await stat(dir);
  const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
  return (st.mode & bit) !== 0;
}

/** The folder (or file) through which `source` must be staged, or undefined when the uid reaches it directly. */
async function stagePoint(source: string, user: { uid: number; gid: number }): Promise<string | undefined> {
  const parts = source.split(sep).filter(Boolean);
  let point: string | undefined;
  let dir = '/';
  for (let i = 0; i < parts.length; i++) {
    if (!(await searchable(dir, user))) point = join(dir, parts[i]!);
    dir = join(dir, parts[i]!);
  }
  return point;
}

/**
 * Stages the unreachable ones among `sources` (absolute, links resolved) for `user`.
 *
 * @example
 * const staged = await stageSources(['/root/.pyenv/versions/3.11.7', '/srv/sb/attempts/1/ws'], { uid: 61000, gid: 61000 });
 * staged.path('/root/.pyenv/versions/3.11.7'); // '/run/flywheel-sandbox/0/versions/3.11.7'
 * // then: nsenter --mount=<staged.mountNamespace> -- setpriv … bwrap --ro-bind <that path> …
 */
export async function stageSources(sources: string[], user: { uid: number; gid: number }): Promise<StagedSources> {
  const points = new Map<string, string>();
  const pointOf = new Map<string, string>();
  for (const source of new Set(sources)) {
    const point = await stagePoint(source, user);
    if (!point) continue;
    pointOf.set(source, point);
    if (!points.has(point)) points.set(point, join(STAGE_ROOT, String(points.size)));
  }
  // A point inside another point is reached through the outer one.
  for (const [source, point] of pointOf) {
    const outer = [...points.keys()].find((p) => p !== point && point.startsWith(`${p}/`));
    if (outer) pointOf.set(source, outer);
  }
  const used = new Set(pointOf.values());
  for (const p of [...points.keys()]) if (!used.has(p)) points.delete(p);
  const path = (source: string): string => {
    const point = pointOf.get(source);
    return point ? `${points.get(point)}${source.slice(point.length)}` : source;
  };
  if (points.size === 0) return { path, release: () => undefined };

  await mkdir(STAGE_ROOT, { recursive: true, mode: 0o755 });
  const args: string[] = [];
  for (const [point, staged] of points) {
    const isDir = (await stat(point)).isDirectory();
    args.push(isDir ? 'd' : 'f', point, staged);
  }
  // Mounts made by root in a private namespace of their own: nothing changes on the host.
  const script = `
set -e
mount -t tmpfs -o mode=0755,size=1m flywheel-stage "${STAGE_ROOT}"
while [ $# -gt 0 ]; do
  if [ "$1" = d ]; then mkdir "$3"; else : > "$3"; fi
  mount --rbind "$2" "$3"
  shift 3
done
echo ready
exec cat > /dev/null
`;
  const holder: ChildProcess = spawn('/usr/bin/unshare', ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'flywheel-stage', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {},
  });
  await new Promise<void>((ready, fail) => {
    let out = '';
    let err = '';
    holder.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) ready();
    });
    holder.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    holder.on('error', fail);
    holder.on('exit', (code) => fail(new Error(`staging bind sources failed (${code}): ${err.trim().slice(0, 300)}`)));
  });
  holder.stdin!.on('error', () => undefined);
  return {
    path,
    mountNamespace: `/proc/${holder.pid}/ns/mnt`,
    release: () => {
      if (holder.exitCode === null && holder.signalCode === null) holder.kill('SIGKILL');
    },
  };
}

