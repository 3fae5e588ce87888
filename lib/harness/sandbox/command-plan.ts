/**
 * Lays out, once per attempt, the root file system every command of the attempt gets (`CommandPlan`, which
 * `sandbox-command.ts` turns into a command line), after checking the task environment against what must stay out of
 * reach: no bind may show the sandbox root (the layer cache, other attempts) or the task's source repository (its
 * history). Bind sources the sandbox uid cannot reach are staged (`stage-sources.ts`).
 *
 * @example
 * const { plan, staged } = await buildCommandPlan({ base, root, sourceDir, environment, exposed, user, tmpDir, workdir,
 *   cgroupProcs: cgroup.procsFiles, variables: (pathDirs) => commandVariables({ pathDirs, … }) });
 * sandboxCommand(plan, { command: 'pytest -q', cwd: workdir });
 */
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { HOST_GIT, type BaseSystem, type MountOp, type SandboxUser } from './base-system.ts';
import type { Exposure } from './expose-interpreters.ts';
import { gitTargets } from './git-targets.ts';
import { within } from './path-within.ts';
import type { SandboxEnvironment, SandboxSpec } from './sandbox.ts';
import type { CommandPlan } from './sandbox-command.ts';
import { SandboxSetupError } from './sandbox-errors.ts';
import { stageSources, type StagedSources } from './stage-sources.ts';

const execFileAsync = promisify(execFile);
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export interface PlannedCommands {
  plan: CommandPlan;
  /** Targets of the read-only binds (environment and provider): naming them is no read outside the workspace. */
  shownPaths: string[];
  /** The sandbox's PATH (the environment's folders first). */
  pathDirs: string[];
  /** Holds the staged bind sources for the attempt's life; released at teardown. */
  staged: StagedSources;
}

export async function buildCommandPlan(input: {
  base: BaseSystem;
  /** The provider's root (layer cache, attempts): must stay out of reach. */
  root: string;
  /** The task's source repository (its history): must stay out of reach. */
  sourceDir: string;
  environment: SandboxEnvironment;
  /** What the provider binds besides the environment. */
  exposed: Exposure;
  outputBinds?: SandboxSpec['outputBinds'];
  user: SandboxUser;
  /** The attempt's /tmp on its disk. */
  tmpDir: string;
  workdir: string;
  cgroupProcs: string[];
  cpuSeconds?: number;
  /** Every variable a command sees, given its PATH (provisional until the network is up). */
  variables: (pathDirs: string[]) => Record<string, string>;
}): Promise<PlannedCommands> {
  const { base, root, sourceDir: source, environment, workdir } = input;
  const normalized = (what: string, path: string) => {
    if (!isAbsolute(path) || normalize(path) !== path.replace(/\/+$/, '') || path === '/') throw new SandboxSetupError(`${what}: ${path} is not a normalized absolute path`);
  };
  const reachable = async (what: string, path: string): Promise<string> => {
    const real = await realpath(path).catch(() => {
      throw new SandboxSetupError(`${what} ${path} does not exist`);
    });
    if (within(root, real) || within(real, root)) throw new SandboxSetupError(`${what} ${path} would expose the sandbox root (layer cache, other attempts)`);
    if (within(source, real) || within(real, source)) throw new SandboxSetupError(`${what} ${path} would show the task's source repository ${source} (and its history) inside the sandbox`);
    return real;
  };
  const binds: Array<{ source: string; target: string }> = [];
  for (const b of environment.binds) {
    normalized('environment bind target', b.target);
    binds.push({ source: await reachable('environment bind', b.source), target: b.target });
  }
  for (const p of input.exposed.paths) if (!binds.some((b) => b.target === p)) binds.push({ source: await reachable('exposed path', p), target: p });
  const shownPaths = binds.map((b) => b.target);
  const masks = [...new Set([...(environment.masks ?? []), ...input.exposed.masks])];
  for (const m of masks) normalized('mask', m);
  const workspaceBinds: Array<{ source: string; path: string }> = [];
  for (const b of environment.workspaceBinds ?? []) {
    const rel = normalize(b.path);
    if (isAbsolute(rel) || rel.startsWith('..') || rel === '.' || rel === '.git' || rel.startsWith('.git/')) {
      throw new SandboxSetupError(`workspace bind path ${b.path} must be a relative path inside the workspace, outside .git`);
    }
    workspaceBinds.push({ source: await reachable('workspace bind', b.source), path: rel });
  }
  const outputBinds: Array<{ source: string; target: string }> = [];
  for (const b of input.outputBinds ?? []) {
    normalized('output bind target', b.target);
    const real = await reachable('output bind', b.source);
    // Written by the sandbox user.
    await execFileAsync('chown', ['-R', '-h', `${input.user.uid}:${input.user.gid}`, real]);
    outputBinds.push({ source: real, target: b.target });
  }
  const pathDirs = [...new Set([...environment.pathDirs, ...input.exposed.binDirs, ...SYSTEM_PATH])];

  // The order matters: /tmp before what may lie under it (the workspace, a toolchain in a checkout under /tmp),
  // masks after the binds they cover, the git shim last.
  const mounts: MountOp[] = [...base.mounts, { op: 'bind', source: input.tmpDir, target: '/tmp' }];
  for (const b of binds) mounts.push({ op: 'ro-bind', source: b.source, target: b.target });
  for (const m of masks) mounts.push({ op: 'ro-bind', source: base.emptyDir, target: m });
  mounts.push({ op: 'bind', source: workdir, target: workdir });
  for (const b of workspaceBinds) mounts.push({ op: 'ro-bind', source: b.source, target: join(workdir, b.path), agentOnly: true });
  for (const b of outputBinds) mounts.push({ op: 'bind', source: b.source, target: b.target });
  mounts.push({ op: 'ro-bind', source: HOST_GIT, target: base.realGitInside });
  for (const target of await gitTargets(pathDirs, binds)) mounts.push({ op: 'ro-bind', source: base.gitShim, target });

  const staged = await stageSources(
    mounts.flatMap((m) => (m.op === 'bind' || m.op === 'ro-bind' ? [m.source] : [])),
    input.user,
  );
  const plan: CommandPlan = {
    user: input.user,
    seccompFile: base.seccompFile,
    mounts: mounts.map((m) => (m.op === 'bind' || m.op === 'ro-bind' ? { ...m, source: staged.path(m.source) } : m)),
    // Completed once the network is up (the proxy's port); the namespace to join is added then too.
    env: input.variables(pathDirs),
    ...(staged.mountNamespace ? { mountns: staged.mountNamespace } : {}),
    cgroupProcs: input.cgroupProcs,
    ...(input.cpuSeconds ? { cpuSeconds: input.cpuSeconds } : {}),
  };
  return { plan, shownPaths, pathDirs, staged };
}
