/**
 * The command line one sandboxed command runs as. Everything costly (the cgroup, the size-capped disk, the staged
 * sources, the base system) is made once per attempt; per command there is only this exec chain, a few milliseconds:
 *
 *   sh (as root: enter the attempt's cgroup by writing its own pid to each cgroup.procs; RLIMIT_CPU; open the seccomp
 *       program on fd 3)
 *   → nsenter (strict mode: join the attempt's network namespace, loopback and the egress forwarder only; and the
 *       attempt's staging mount namespace when some bind source needed staging, see `stage-sources.ts`)
 *   → setpriv (drop to the sandbox's unprivileged uid and gid, no supplementary groups, no new privileges)
 *   → bwrap (a new user namespace mapping that one uid; user namespaces disabled below it; new pid, ipc, uts and
 *       cgroup namespaces; a mount namespace whose root is a tmpfs holding only the plan's mounts; the environment
 *       cleared; the seccomp filter; no capabilities)
 *   → /bin/bash -c COMMAND
 *
 * bubblewrap's own pid 1 waits for the command; when the command ends (or bwrap is killed, which `--die-with-parent`
 * passes on) the pid namespace goes, and every process the command left behind with it.
 */
import type { MountOp, SandboxUser } from './base-system.ts';

/** What the launcher prints before exiting 125 when it cannot put the command in the attempt's cgroup. */
export const LAUNCH_FAILURE_PREFIX = 'flywheel-sandbox-launch:';

const LAUNCHER = `
seccomp=$1 cpu=$2
shift 2
while [ "$1" != -- ]; do
  echo $$ 2>/dev/null > "$1" || { echo "${LAUNCH_FAILURE_PREFIX} cannot enter cgroup $1" >&2; exit 125; }
  shift
done
shift
ulimit -c 0
if [ -n "$cpu" ]; then ulimit -S -t "$cpu" && ulimit -H -t $((cpu + 1)) || { echo "${LAUNCH_FAILURE_PREFIX} cannot set RLIMIT_CPU" >&2; exit 125; }; fi
exec "$@" 3< "$seccomp"
`;

export interface CommandPlan {
  user: SandboxUser;
  /** The compiled seccomp filter (opened by the launcher, as root, for each command). */
  seccompFile: string;
  /** The root file system, in order (bind sources as bubblewrap reaches them: staged where needed). */
  mounts: MountOp[];
  /** Every variable the command sees. */
  env: Record<string, string>;
  /** Strict mode: the network namespace to join (`/proc/<pid>/ns/net`). Absent: the host's network (lenient). */
  netns?: string;
  /** The staging mount namespace to run bubblewrap from, when sources were staged. */
  mountns?: string;
  /** The attempt cgroup's `cgroup.procs` files. */
  cgroupProcs: string[];
  /** RLIMIT_CPU for each process of the command (SIGXCPU at the limit, SIGKILL a second later). */
  cpuSeconds?: number;
}

/**
 * The program and arguments to spawn (with an empty environment) for `command` in `cwd`. `internal` commands are the
 * harness's own (diff, re-audit): they leave out the mounts marked `agentOnly` (the environment's workspace binds).
 *
 * @example
 * const { file, args } = sandboxCommand(plan, { command: 'pytest -q', cwd: workdir });
 * spawn(file, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
 */
export function sandboxCommand(plan: CommandPlan, run: { command: string; cwd: string; internal?: boolean }): { file: string; args: string[] } {
  const { uid, gid } = plan.user;
  const bwrap = ['/usr/bin/bwrap', '--unshare-user', '--uid', String(uid), '--gid', String(gid), '--disable-userns'];
  bwrap.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--hostname', 'sandbox');
  bwrap.push('--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv');
  for (const [key, value] of Object.entries(plan.env)) bwrap.push('--setenv', key, value);
  bwrap.push('--proc', '/proc', '--dev', '/dev');
  for (const m of plan.mounts) {
    if (m.op === 'symlink') bwrap.push('--symlink', m.link, m.target);
    else if (m.op === 'dir') bwrap.push('--dir', m.target);
    else if (!m.agentOnly || !run.internal) bwrap.push(m.op === 'bind' ? '--bind' : '--ro-bind', m.source, m.target);
  }
  // Last: the root tmpfs itself read-only (what is writable is the workspace, /tmp and /dev's own tmpfs).
  bwrap.push('--remount-ro', '/', '--chdir', run.cwd, '--seccomp', '3', '--', '/bin/bash', '-c', run.command);

  const enter = plan.netns || plan.mountns ? ['/usr/bin/nsenter', ...(plan.mountns ? [`--mount=${plan.mountns}`] : []), ...(plan.netns ? [`--net=${plan.netns}`] : []), '--'] : [];
  const drop = ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--no-new-privs', '--'];
  return {
    file: '/bin/sh',
    args: ['-c', LAUNCHER, 'flywheel-sandbox', plan.seccompFile, plan.cpuSeconds ? String(plan.cpuSeconds) : '', ...plan.cgroupProcs, '--', ...enter, ...drop, ...bwrap],
  };
}
