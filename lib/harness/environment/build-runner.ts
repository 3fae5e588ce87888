/**
 * Where an environment build's commands run. Lockfiles and setup scripts are attacker-controlled, so the default
 * runs them in a strict sandbox (`sandboxBuildRunner`): only the toolchains, the package-index folders and the
 * build's input are visible, the network reaches the package indexes only, and the one writable place outside the
 * sandbox's own /tmp is the layer being built, bound at the fixed path it is later bound at read-only (virtualenvs
 * hold absolute paths). `processBuildRunner` runs the same script as a plain child process in a private mount
 * namespace (the output bound at the same fixed path), for trusted trees and hosts without the sandbox.
 */
import { spawn } from 'node:child_process';
import type { SandboxEnvironment, SandboxProvider } from '../sandbox/sandbox.ts';
import { EnvironmentBuildError } from './environment-errors.ts';

export interface BuildJob {
  /** `python` or `node`: names the build in errors. */
  label: string;
  /** A folder of plain files (the build's inputs: a requirements file, a package.json) used as the workspace. */
  inputDir: string;
  /** Writable binds: the layer being built at its fixed target. */
  outputs: Array<{ source: string; target: string }>;
  /** Toolchains and read-only package-index folders; the build sees nothing else of the host. */
  environment: SandboxEnvironment;
  /** Hosts the build may reach (the package indexes). */
  allowHosts: string[];
  env: Record<string, string>;
  /** A bash script, run with the workspace as the working directory. */
  script: string;
  timeoutMs: number;
}

export interface BuildOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Which limit ended the build, if one did. */
  limit?: string;
  durationMs: number;
}

export type BuildRunner = (job: BuildJob) => Promise<BuildOutput>;

/** Output kept per build (pip and npm are chatty; the tail is what names the failure). */
const BUILD_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * Runs builds in strict sandboxes of `provider` (opened with an explicit environment, so the provider's own resolver
 * is not asked and nothing recurses).
 */
export function sandboxBuildRunner(provider: SandboxProvider | (() => Promise<SandboxProvider>)): BuildRunner {
  let ready: Promise<SandboxProvider> | undefined;
  const get = () => (ready ??= typeof provider === 'function' ? provider() : Promise.resolve(provider));
  return async (job) => {
    const sandbox = await get();
    const session = await sandbox.open({
      sourceDir: job.inputDir,
      mode: 'strict',
      networkAllowList: job.allowHosts,
      // Unpacked wheels and npm's cache live in the sandbox's /tmp until the build ends: room for large packages.
      limits: { commandTimeoutMs: job.timeoutMs, outputBytes: BUILD_OUTPUT_BYTES, memoryBytes: 8 * 1024 ** 3, diskBytes: 16 * 1024 ** 3 },
      env: job.env,
      environment: job.environment,
      outputBinds: job.outputs,
    });
    try {
      // The output must be the bound layer: a provider without outputBinds would leave the build in its own copy.
      const probe = job.outputs.map((o) => `[ -w '${o.target}' ] && [ -e '${o.target}/.flywheel-output' ] || { echo '${o.target}'; exit 97; }`).join('\n');
      const check = await session.exec(probe || 'true', { timeoutMs: 60_000 });
      if (check.exitCode !== 0) {
        throw new EnvironmentBuildError(`the build sandbox does not show ${check.stdout.trim() || 'its output'} writable at its target: the sandbox provider must support SandboxSpec.outputBinds (${check.stderr.trim().slice(0, 200)})`);
      }
      const r = await session.exec(job.script, { timeoutMs: job.timeoutMs });
      return { exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ...(r.limit ? { limit: r.limit } : {}), durationMs: r.durationMs };
    } finally {
      await session.close();
    }
  };
}

const MOUNT_SETUP = `
set -e
i=0
while [ "$i" -lt "$FW_OUTPUT_COUNT" ]; do
  eval "src=\\$FW_OUTPUT_SRC_$i; dst=\\$FW_OUTPUT_DST_$i"
  mkdir -p "$dst"
  mount --bind "$src" "$dst"
  i=$((i+1))
done
cd "$FW_INPUT"
set +e
exec /bin/bash -c "$FW_SCRIPT"
`;

/**
 * Runs builds as child processes in a private mount namespace (root needed for the bind mounts): the host's files and
 * network are all visible, so only for trees you trust.
 */
export function processBuildRunner(): BuildRunner {
  return (job) =>
    new Promise((done) => {
      const started = Date.now();
      const env: Record<string, string> = {
        PATH: [...job.environment.pathDirs, '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
        HOME: job.inputDir,
        LANG: 'C.UTF-8',
        ...(job.environment.env ?? {}),
        ...job.env,
        FW_INPUT: job.inputDir,
        FW_SCRIPT: job.script,
        FW_OUTPUT_COUNT: String(job.outputs.length),
      };
      job.outputs.forEach((o, i) => {
        env[`FW_OUTPUT_SRC_${i}`] = o.source;
        env[`FW_OUTPUT_DST_${i}`] = o.target;
      });
      const child = spawn('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', MOUNT_SETUP], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      let limit: string | undefined;
      const timer = setTimeout(() => {
        limit = 'time';
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, job.timeoutMs);
      const finish = (exitCode: number | null, signal: string | null) => {
        clearTimeout(timer);
        const tail = (bufs: Buffer[]) => Buffer.concat(bufs).subarray(-BUILD_OUTPUT_BYTES).toString('utf8');
        done({ exitCode, signal, stdout: tail(out), stderr: tail(err), ...(limit ? { limit } : {}), durationMs: Date.now() - started });
      };
      child.on('close', (code, signal) => finish(code, signal));
      child.on('error', (error) => {
        err.push(Buffer.from(String(error)));
        finish(null, null);
      });
    });
}
