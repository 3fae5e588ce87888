/**
 * The sandbox an attempt runs in: a private copy of the task's workspace, processes isolated in Linux namespaces,
 * git history moved out of reach in strict mode, and network only through an allow-listing egress proxy.
 *
 * The agent loop (`lib/harness/agent/`) sees only `SandboxSession`; implementations live beside this file and all
 * pass the conformance suite in `test/harness/conformance/`. The one provider so far is `NamespaceSandboxProvider`
 * (`./namespace-sandbox.ts`): bubblewrap, cgroups, overlayfs and util-linux's nsenter/setpriv, needs root.
 */
import { z } from 'zod';
import type { HarnessMode } from '../task/harness-mode.ts';

export interface SandboxLimits {
  /** Wall clock for one command, in milliseconds; the whole process tree is killed when it runs out. */
  commandTimeoutMs: number;
  /** CPU seconds for each process of one command (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later). */
  cpuSeconds?: number;
  /**
   * Memory for the whole attempt, every command's processes together (a cgroup; the kernel's OOM killer acts inside
   * it and the command reports `limit: 'memory'`). Files the attempt writes to its capped disk count too (tmpfs).
   * Default 4 GiB.
   */
  memoryBytes?: number;
  /** Processes and threads of the attempt at once (cgroup `pids.max`; a command that hits it is stopped, `limit: 'processes'`). Default 512. */
  processes?: number;
  /** Bytes the attempt may write to its workspace and /tmp together (a size-capped tmpfs; `limit: 'disk'`). Default 2 GiB. */
  diskBytes?: number;
  /** CPU bandwidth of the attempt, in CPUs (a cgroup quota: slowed, never killed). Default 2. */
  cpus?: number;
  /** Bytes of stdout+stderr kept per command; the rest is dropped and `truncated` is set. */
  outputBytes: number;
}

/**
 * What a task's commands run against besides the workspace: toolchains and the task's dependencies, built outside
 * the sandbox by `lib/harness/environment/` (cached by the task's lockfiles) and bound read-only inside. Nothing of
 * the host is visible inside except what an environment binds (plus the sandbox's own minimal base system).
 */
export interface SandboxEnvironment {
  /** Stable id of the environment (hash of the recipe and the lockfiles), for the attempt record. */
  id: string;
  /** Host directories bound read-only inside at `target` (a virtualenv, a `node_modules` layer, a toolchain prefix). */
  binds: Array<{ source: string; target: string }>;
  /** Paths inside the binds covered by an empty read-only directory (an interpreter's own `site-packages`). */
  masks?: string[];
  /**
   * Read-only binds at a path relative to the workspace root (a `node_modules` layer where node's resolution finds it).
   * They are not part of the agent's diff.
   */
  workspaceBinds?: Array<{ source: string; path: string }>;
  /** Directories put first on PATH, in this order. */
  pathDirs: string[];
  /** Variables set for every command (`VIRTUAL_ENV`, `NODE_PATH`). */
  env?: Record<string, string>;
}

export interface SandboxSpec {
  /** The task's repository checkout to copy from (a directory with `.git`, or plain files). */
  sourceDir: string;
  /** Commit the attempt starts from; `HEAD` of sourceDir when absent. */
  baseCommit?: string;
  mode: HarnessMode;
  /** Hosts (`example.com`, `*.pypi.org`, `127.0.0.1:8080`) the sandboxed processes may reach in strict mode. */
  networkAllowList: string[];
  limits: SandboxLimits;
  /** Extra environment for every command. */
  env?: Record<string, string>;
  /**
   * The task environment to run against. Absent: the provider's environment resolver builds (or takes from its cache)
   * the environment the base tree's lockfiles call for.
   */
  environment?: SandboxEnvironment;
  /**
   * Writable binds (host `source` at `target` inside). Only the environment builder uses them, to install a task's
   * dependencies at the fixed path they will later be bound read-only at; never given to an agent's sandbox.
   */
  outputBinds?: Array<{ source: string; target: string }>;
}

export interface ExecResult {
  exitCode: number | null;
  /** Signal that ended the process, if any. */
  signal: string | null;
  stdout: string;
  stderr: string;
  /** True when output passed `limits.outputBytes` and was cut. */
  truncated: boolean;
  /**
   * Which limit ended the command, if one did: `processes` (the attempt's process limit), `disk` (the attempt's disk
   * cap: a write failed with ENOSPC), `memory` (the OOM killer killed a process of the attempt during the command).
   */
  limit?: 'time' | 'cpu' | 'memory' | 'output' | 'processes' | 'disk';
  durationMs: number;
}

/** Something the sandbox blocked or observed, kept as an integrity flag on the attempt (its record stores it). */
export const SandboxObservationSchema = z.object({
  kind: z.enum(['network.blocked', 'network.allowed', 'git.history-needed', 'read.outside-workspace']),
  at: z.string(),
  detail: z.record(z.string(), z.unknown()),
});
export type SandboxObservation = z.infer<typeof SandboxObservationSchema>;

/**
 * The strict workspace re-audited after the agent finished, before the copy is removed: did anything the agent could
 * reach bring history back? An object the base tree does not hold is fine when the agent made it (a `git commit`,
 * a `git add`); a commit or tag object that the task's real history holds is not (the agent could only have it from
 * the history: its author, date and parents cannot be guessed). Blobs and trees that equal later content are counted
 * apart (a correct fix can equal the later commit's file byte for byte). The attempt record stores it.
 */
export const HistoryReauditSchema = z.object({
  ok: z.boolean(),
  /** Objects the workspace can read that are outside the base tree (agent-made or otherwise). */
  newObjects: z.number(),
  /** Commit and tag objects of the source's history that are not the base tree's: history recovered. */
  recoveredHistory: z.array(z.string()),
  /** Blobs and trees outside the base tree that the source's history also holds (may be an identical fix). */
  matchingLaterContent: z.number(),
  /** What is wrong, in words (also when the workspace repository could not be read). */
  problems: z.array(z.string()),
  /** How new objects were found: the overlay's upper layer (fast), or every object listed inside the sandbox. */
  method: z.enum(['upper-layer', 'full-listing']),
  durationMs: z.number(),
});
export type HistoryReaudit = z.infer<typeof HistoryReauditSchema>;

export interface SandboxSession {
  /** Absolute path of the workspace copy (what the agent edits). */
  readonly workdir: string;
  readonly mode: HarnessMode;
  /**
   * Runs a shell command (`bash -c`, not a login shell, so /etc/profile cannot reset PATH) inside the sandbox with
   * cwd = workdir (or a subdirectory of it; anything outside is refused). Each call gets fresh pid and mount
   * namespaces: a background process does not outlive its command.
   */
  exec(command: string, options?: { cwd?: string; timeoutMs?: number; stdin?: string }): Promise<ExecResult>;
  /** The agent's changes against the base commit, as a git patch (binary-safe). */
  diff(): Promise<string>;
  /** Observations so far (blocked requests, git commands that needed history, …). */
  observations(): SandboxObservation[];
  /** Strict mode: re-audits the workspace repository after the agent ran (see `HistoryReaudit`). Lenient: undefined. */
  reaudit?(): Promise<HistoryReaudit | undefined>;
  /**
   * The task environment this session's commands run against, once it is resolved (set by `open`): its `id` and, when
   * the resolver read them, the manifests of its layers (`CachedSandboxEnvironment.manifests`, each an
   * `EnvironmentManifest`: `kind`, `key`, `removed`, `notes`, …). The attempt record keeps its key facts. Optional:
   * a session without it records no environment. (Not named `environment`: `NamespaceSandboxSession` has a private
   * method of that name.)
   */
  readonly taskEnvironment?: { id: string; manifests?: unknown[] };
  /** Restores git history byte for byte (strict mode), stops the proxy, removes the copy. Idempotent. */
  close(): Promise<void>;
}

export interface SandboxProvider {
  open(spec: SandboxSpec): Promise<SandboxSession>;
}
