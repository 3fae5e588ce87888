/**
 * The minimal read-only base system every sandbox command sees, built from an allow-list, never from the host's root
 * minus a deny-list: /usr (and /bin, /sbin, /lib, /lib64 as the host lays them out: links into /usr or directories),
 * a curated /etc, and what the harness itself brings (the git shim, the seccomp program, an empty folder that masks
 * cover paths with). Prepared once per provider under `<root>/base`.
 *
 * /etc holds only: a synthetic passwd and group naming the sandbox user, and the host's hosts, resolv.conf,
 * nsswitch.conf, ld.so.cache, ld.so.conf, ld.so.conf.d, alternatives, ssl/certs, ssl/openssl.cnf, ca-certificates,
 * ca-certificates.conf and localtime. Nothing else of /etc (no shadow, gshadow, sudoers, ssh keys, ssl/private).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readlink, realpath, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seccompProgram } from './seccomp-filter.ts';

/** The host's git, which the shim calls and the harness's own commands (diff, re-audit) run. */
export const HOST_GIT = '/usr/bin/git';
/** Where git's own programs live; its `git` is covered by the shim too. */
export const GIT_CORE_GIT = '/usr/lib/git-core/git';

/** The files and folders of the host's /etc a command may see (relative to /etc). */
export const ETC_ALLOW_LIST = [
  'hosts',
  'resolv.conf',
  'nsswitch.conf',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'localtime',
] as const;

/** The top-level entries of the host's root that may be links into /usr (merged /usr) or directories of their own. */
const ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib64', 'lib32', 'libx32'] as const;

export interface SandboxUser {
  uid: number;
  gid: number;
  name: string;
}

/** One step of laying out a command's root file system, in bubblewrap's terms. */
export type MountOp =
  | { op: 'ro-bind' | 'bind'; source: string; target: string; /** Agent commands only (not the harness's diff). */ agentOnly?: boolean }
  | { op: 'symlink'; link: string; target: string }
  | { op: 'dir'; target: string };

export interface BaseSystem {
  dir: string;
  /** The compiled seccomp filter (see `seccomp-filter.ts`), handed to bubblewrap on fd 3. */
  seccompFile: string;
  /** An empty read-only folder bound over every masked path. */
  emptyDir: string;
  /** The git shim bound over every `git` a command can find. */
  gitShim: string;
  /** Where the real git is bound inside: a path no tool looks in, so only the shim calls it. */
  realGitInside: string;
  /** What lays out /usr, the root links and /etc. */
  mounts: MountOp[];
}

/**
 * A shell script that runs the real git and appends one record (exit code, cwd, argv; \x1f between fields, \x1e
 * after) to /tmp/.flywheel/git.log, which `git-observations.ts` reads. Called as a git-core link (`git-log`), it
 * runs as `git log`.
 */
function gitShimScript(realGit: string): string {
  return `#!/bin/bash
case "\${0##*/}" in git-*) set -- "\${0##*/git-}" "$@" ;; esac
"${realGit}" "$@"
code=$?
{ printf '%s\\x1f%s' "$code" "$PWD"; for a in "$@"; do printf '\\x1f%s' "$a"; done; printf '\\x1e'; } >> /tmp/.flywheel/git.log 2>/dev/null
exit $code
`;
}

async function writeAtomically(path: string, data: string | Buffer, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, data, { mode });
  await chmod(tmp, mode);
  await rename(tmp, path);
}

/**
 * Writes the base system's own files under `dir` and returns the bubblewrap arguments for it.
 *
 * @example
 * const base = await prepareBaseSystem('/var/lib/flywheel/sandbox/base', { uid: 61000, gid: 61000, name: 'flywheel' });
 * base.mounts; // [{ op: 'ro-bind', source: '/usr', target: '/usr' }, { op: 'symlink', link: 'usr/bin', target: '/bin' }, …]
 */
export async function prepareBaseSystem(dir: string, user: SandboxUser): Promise<BaseSystem> {
  await mkdir(join(dir, 'empty'), { recursive: true, mode: 0o555 });
  await chmod(join(dir, 'empty'), 0o555);
  // Named after the base folder, so providers sharing a root agree on it (the shim file is shared).
  const realGitInside = `/.flywheel-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}/git`;
  const passwd = `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n${user.name}:x:${user.uid}:${user.gid}:flywheel sandbox:/tmp/home:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
  const group = `root:x:0:\n${user.name}:x:${user.gid}:\nnogroup:x:65534:\n`;
  await Promise.all([
    writeAtomically(join(dir, 'passwd'), passwd, 0o444),
    writeAtomically(join(dir, 'group'), group, 0o444),
    writeAtomically(join(dir, 'seccomp.bpf'), seccompProgram(), 0o444),
    writeAtomically(join(dir, 'git-shim'), gitShimScript(realGitInside), 0o555),
  ]);

  const mounts: MountOp[] = [{ op: 'ro-bind', source: '/usr', target: '/usr' }];
  for (const name of ROOT_LINKS) {
    const st = await lstat(`/${name}`).catch(() => undefined);
    if (!st) continue;
    if (st.isSymbolicLink()) mounts.push({ op: 'symlink', link: await readlink(`/${name}`), target: `/${name}` });
    else if (st.isDirectory()) mounts.push({ op: 'ro-bind', source: `/${name}`, target: `/${name}` });
  }
  mounts.push(
    { op: 'dir', target: '/etc' },
    { op: 'ro-bind', source: join(dir, 'passwd'), target: '/etc/passwd' },
    { op: 'ro-bind', source: join(dir, 'group'), target: '/etc/group' },
  );
  for (const rel of ETC_ALLOW_LIST) {
    // Followed: a link (localtime, a resolv.conf managed elsewhere) shows as the file it names.
    const real = await realpath(`/etc/${rel}`).catch(() => undefined);
    if (real) mounts.push({ op: 'ro-bind', source: real, target: `/etc/${rel}` });
  }
  return { dir, seccompFile: join(dir, 'seccomp.bpf'), emptyDir: join(dir, 'empty'), gitShim: join(dir, 'git-shim'), realGitInside, mounts };
}
