/**
 * The sandbox provider built on Linux namespaces: bubblewrap (`/usr/bin/bwrap`, Debian's `bubblewrap`) builds each
 * command's root file system from an allow-list, util-linux (nsenter, setpriv, mount) and cgroups do the rest. Needs
 * root on the host (to mount the workspace, make cgroups and join the strict network namespace); the commands
 * themselves run as an unprivileged uid.
 *
 * Per attempt, once: an overlay workspace over cached read-only layers (copy fallback) whose writable parts live on a
 * size-capped tmpfs with the attempt's /tmp (`attempt-disk.ts`); a cgroup holding every command of the attempt, with
 * memory, process and CPU limits (`attempt-cgroup.ts`); the strict-mode history audit; the task environment
 * (`spec.environment`, or the provider's resolver); in strict mode a network namespace holding only loopback plus a
 * forwarder to the egress proxy (`strict-network.ts`).
 *
 * Per command (`sandbox-command.ts`, laid out by `command-plan.ts`, run by `run-command.ts`): the root file system
 * holds only the base system (/usr, the root links, a curated /etc: `base-system.ts`), the environment's read-only
 * binds (package folders masked), the workspace, the private /tmp, a minimal /dev and a fresh /proc (its /proc/sys
 * read-only; no /sys). Nothing else of the host exists inside. The command runs as the sandbox uid in a user namespace
 * that maps only that uid (never root), in new pid, ipc, uts and cgroup namespaces, with user namespaces disabled, no
 * capabilities, a seccomp filter (`seccomp-filter.ts`) and a cleared environment; its pid namespace dies with it,
 * background processes included.
 *
 * This file is the entry point callers import; the parts are: `namespace-provider.ts` (the provider),
 * `namespace-session.ts` (one attempt's start and close), `attempt-dir.ts` (the attempt's folder, its removal and
 * the sweep), `history-reaudit.ts`, `workspace-diff.ts`, `harvest-git-log.ts`, `outside-reads.ts`.
 *
 * @example
 * import { NamespaceSandboxProvider } from './namespace-sandbox.ts';
 * const provider = new NamespaceSandboxProvider({ exposePaths: ['/opt/toolchain'] });
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 * const r = await session.exec('git log --oneline');
 * await session.close();
 */
export { DEFAULT_LIMITS } from './attempt-limits.ts';
export { NamespaceSandboxProvider, cachedEnvironmentResolver } from './namespace-provider.ts';
export { NamespaceSandboxSession } from './namespace-session.ts';
export type { NamespaceSandboxOptions } from './namespace-types.ts';
export { SandboxErrorNames, SandboxExecError, SandboxSetupError } from './sandbox-errors.ts';
