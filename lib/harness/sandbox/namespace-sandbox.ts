/**
 * The sandbox provider built on Linux namespaces with util-linux tools only (unshare, nsenter, setpriv, prlimit,
 * mount; `ip` from iproute2 to raise loopback): no bubblewrap, no Docker. Needs root (or CAP_SYS_ADMIN) on the host.
 *
 * Per attempt: an overlay workspace over cached read-only layers (copy fallback), strict-mode history audit, and in
 * strict mode a network namespace holding only loopback plus a forwarder to the egress proxy. Per command: a new pid
 * namespace (the tree dies with its first process), a new mount namespace where the sandbox root, the source
 * repository and /root are covered by empty tmpfs, every other mount is read-only, /tmp is the attempt's own, then all
 * capabilities are dropped (so the covers cannot be unmounted) and rlimits applied.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants as osConstants, tmpdir } from 'node:os';
import { chmod, lstat, mkdir, readdir, readFile, rm, stat, writeFile, truncate } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlywheelError } from '../../errors.ts';
import { auditHistory, type HistoryAudit } from '../git/audit-history.ts';
import { git } from '../git/run-git.ts';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { DEFAULT_INTERPRETERS, detectInterpreterExposure, type Exposure } from './expose-interpreters.ts';
import { copyLayers, mountOverlay, prepareLayers, unmount, type WorkspaceLayers } from './workspace-layers.ts';
import { parseGitLog } from './git-observations.ts';
import type {
  ExecResult,
  HarnessMode,
  HistoryReaudit,
  SandboxObservation,
  SandboxProvider,
  SandboxSession,
  SandboxSpec,
} from './sandbox.ts';

/** The sandbox could not be set up: an infrastructure error, never the model's failure. */
export class SandboxSetupError extends FlywheelError {
  readonly audit?: HistoryAudit;
  constructor(message: string, audit?: HistoryAudit, options?: ErrorOptions) {
    super('SandboxSetupError', message, options);
    this.audit = audit;
  }
}

export interface NamespaceSandboxOptions {
  /** Holds the layer cache and every attempt's directory; covered inside sandboxes. Default `$TMPDIR/flywheel-sandbox`. */
  root?: string;
  /** More paths to cover inside every sandbox (private suites, credentials). */
  hide?: string[];
  /** `overlay` (fails if unavailable), `copy`, or `auto` (overlay, else copy). Default `auto`. */
  workspace?: 'overlay' | 'copy' | 'auto';
  /**
   * Directories bound read-only inside every sandbox at the same path even when they lie under a hidden path (a
   * toolchain under /root). Their `bin` subdirectory, when there is one, goes first on PATH.
   */
  exposePaths?: string[];
  /**
   * Commands whose host installation is exposed when it lies under a hidden path (see `expose-interpreters.ts`):
   * `true` (default) for python3, python, pytest and node; `false` for none; or a list of command names.
   */
  exposeInterpreters?: boolean | string[];
  /** Also run `git fsck --connectivity-only --unreachable` in the strict audit (about 20 ms on 10,000 files). Default true. */
  fsckAudit?: boolean;
}

const REAL_GIT = '/usr/bin/git';
const FORWARDER = fileURLToPath(new URL('./egress-forwarder.ts', import.meta.url));
const MEMORY_HINT = /MemoryError|Cannot allocate|out of memory|bad_alloc|heap out of memory|memory exhausted/i;

/** Mount setup inside the per-command namespaces; its arguments come as FW_* variables. */
const SETUP = `
set -e
mkdir -p "$FW_TMP/.fw-ws"
mount --bind "$FW_WORKDIR" "$FW_TMP/.fw-ws"
i=0
printf '%s\\n' "$FW_EXPOSE" | while IFS= read -r p; do
  if [ -n "$p" ] && [ -d "$p" ]; then mkdir -p "$FW_TMP/.fw-x/$i"; mount --bind "$p" "$FW_TMP/.fw-x/$i"; fi
  i=$((i+1))
done
mount --rbind "$FW_TMP" /tmp
printf '%s\\n' "$FW_HIDE" | while IFS= read -r h; do
  if [ -n "$h" ] && [ -d "$h" ]; then mount -t tmpfs -o mode=0755,size=64k fw-hidden "$h"; fi
done
i=0
printf '%s\\n' "$FW_EXPOSE" | while IFS= read -r p; do
  if [ -n "$p" ] && [ -d "/tmp/.fw-x/$i" ]; then mkdir -p "$p"; mount --move "/tmp/.fw-x/$i" "$p"; rmdir "/tmp/.fw-x/$i" 2>/dev/null || true; fi
  i=$((i+1))
done
rmdir /tmp/.fw-x 2>/dev/null || true
unset i p
mkdir -p "$FW_WORKDIR"
mount --move /tmp/.fw-ws "$FW_WORKDIR"
rmdir /tmp/.fw-ws 2>/dev/null || true
mount -t tmpfs -o mode=1777,size=256m fw-shm /dev/shm
awk '{print $5}' /proc/self/mountinfo | while IFS= read -r m; do
  case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/tmp|"$FW_WORKDIR") ;; *) mount -o remount,bind,ro "$m" 2>/dev/null || true ;; esac
done
cd "$FW_CWD"
set +e
setpriv --no-new-privs --inh-caps=-all --bounding-set=-all -- prlimit $FW_RLIMITS -- /bin/bash -c "$FW_COMMAND"
exit $?
`;

const GIT_SHIM = `#!/bin/bash
"${REAL_GIT}" "$@"
code=$?
{ printf '%s\\x1f%s' "$code" "$PWD"; for a in "$@"; do printf '\\x1f%s' "$a"; done; printf '\\x1e'; } >> /tmp/.flywheel/git.log 2>/dev/null
exit $code
`;

function signalName(n: number): string | null {
  for (const [name, value] of Object.entries(osConstants.signals)) if (value === n) return name;
  return null;
}

/**
 * @example
 * const provider = new NamespaceSandboxProvider({ hide: ['/srv/private-suites'] });
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 * const r = await session.exec('git log --oneline');
 * await session.close();
 */
export class NamespaceSandboxProvider implements SandboxProvider {
  readonly root: string;
  readonly options: NamespaceSandboxOptions;
  private overlayWorks: boolean | undefined;

  constructor(options: NamespaceSandboxOptions = {}) {
    this.options = options;
    this.root = resolve(options.root ?? join(tmpdir(), 'flywheel-sandbox'));
  }

  private exposurePromise: Promise<Exposure> | undefined;

  /**
   * What every sandbox of this provider binds back read-only (explicit `exposePaths` plus the detected interpreter
   * prefixes under hidden paths), computed once.
   */
  exposure(): Promise<Exposure> {
    this.exposurePromise ??= (async () => {
      // /tmp is the attempt's own inside, so an interpreter installed under it (a checkout's node_modules/node in a
      // clone under /tmp, as CI makes) is as hidden as one under /root.
      const hidden = ['/root', tmpdir(), ...(this.options.hide ?? [])];
      const choice = this.options.exposeInterpreters ?? true;
      const names = choice === true ? [...DEFAULT_INTERPRETERS] : choice === false ? [] : choice;
      const detected = await detectInterpreterExposure(names, hidden);
      const paths = [...detected.paths];
      const binDirs = [...detected.binDirs];
      for (const p of this.options.exposePaths ?? []) {
        if (!isAbsolute(p)) throw new SandboxSetupError(`exposePaths: ${p} is not an absolute path`);
        const dir = resolve(p);
        if (dir === '/' || dir === this.root || this.root.startsWith(`${dir}/`) || dir.startsWith(`${this.root}/`)) {
          throw new SandboxSetupError(`exposePaths: ${p} would expose the sandbox root (layer cache, other attempts)`);
        }
        if (!paths.includes(dir)) paths.push(dir);
        const bin = join(dir, 'bin');
        if (!binDirs.includes(bin) && (await stat(bin).then((st) => st.isDirectory(), () => false))) binDirs.push(bin);
      }
      return { paths, binDirs };
    })();
    return this.exposurePromise;
  }

  get attemptsDir(): string {
    return join(this.root, 'attempts');
  }

  async open(spec: SandboxSpec): Promise<NamespaceSandboxSession> {
    const id = randomUUID();
    const attemptDir = join(this.attemptsDir, id);
    await mkdir(attemptDir, { recursive: true });
    await writeFile(join(attemptDir, 'owner'), `${process.pid}\n`);
    const session = new NamespaceSandboxSession(this, spec, attemptDir);
    try {
      await session.start();
    } catch (error) {
      await session.close().catch(() => undefined);
      if (error instanceof SandboxSetupError) throw error;
      throw new SandboxSetupError(`sandbox failed to start: ${(error as Error).message}`, undefined, { cause: error });
    }
    return session;
  }

  /**
   * Removes attempts whose owning process died without closing them (a crashed harness): unmounts their overlay and
   * deletes their directory. Their namespaces died with their processes; the forwarder dies when its stdin closes.
   */
  async sweep(): Promise<string[]> {
    const removed: string[] = [];
    const entries = await readdir(this.attemptsDir).catch(() => [] as string[]);
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    for (const id of entries) {
      const dir = join(this.attemptsDir, id);
      const owner = Number((await readFile(join(dir, 'owner'), 'utf8').catch(() => '')).trim());
      let alive = false;
      try {
        if (owner > 0) process.kill(owner, 0);
        alive = owner > 0;
      } catch (error) {
        alive = (error as NodeJS.ErrnoException).code === 'EPERM';
      }
      if (alive) continue;
      const ws = join(dir, 'ws');
      if (mounts.includes(` ${ws} `)) await unmount(ws);
      await rm(dir, { recursive: true, force: true });
      removed.push(id);
    }
    return removed;
  }

  /** Mounts overlay when allowed (remembering the answer), else copies. */
  async materialize(lowers: string[], attemptDir: string, workdir: string): Promise<'overlay' | 'copy'> {
    const choice = this.options.workspace ?? 'auto';
    if (choice !== 'copy' && this.overlayWorks !== false) {
      const ok = await mountOverlay(lowers, join(attemptDir, 'upper'), join(attemptDir, 'ovl-work'), workdir);
      if (ok) {
        this.overlayWorks = true;
        return 'overlay';
      }
      if (choice === 'overlay') throw new SandboxSetupError('overlay mount failed');
      this.overlayWorks = false;
    }
    await copyLayers(lowers, workdir);
    return 'copy';
  }
}

export class NamespaceSandboxSession implements SandboxSession {
  readonly workdir: string;
  readonly mode: HarnessMode;
  private readonly provider: NamespaceSandboxProvider;
  private readonly spec: SandboxSpec;
  private readonly attemptDir: string;
  private readonly tmpDir: string;
  private layers: WorkspaceLayers | undefined;
  private strategy: 'overlay' | 'copy' | undefined;
  private proxy: EgressProxy | undefined;
  private forwarder: ChildProcess | undefined;
  private forwarderPort = 0;
  private readonly observed: SandboxObservation[] = [];
  private readonly running = new Set<ChildProcess>();
  private closing: Promise<void> | undefined;
  private exposed: Exposure = { paths: [], binDirs: [] };
  /** Milliseconds spent in each set-up and teardown step (what `bench:harness` reports). */
  readonly timings: { layersMs: number; workspaceMs: number; auditMs: number; networkMs: number; closeMs: number } = {
    layersMs: 0,
    workspaceMs: 0,
    auditMs: 0,
    networkMs: 0,
    closeMs: 0,
  };

  constructor(provider: NamespaceSandboxProvider, spec: SandboxSpec, attemptDir: string) {
    this.provider = provider;
    this.spec = spec;
    this.mode = spec.mode;
    this.attemptDir = attemptDir;
    this.workdir = join(attemptDir, 'ws');
    this.tmpDir = join(attemptDir, 'tmp');
  }

  /** What this attempt's workspace was built with (for the trajectory and the benchmark). */
  get info(): { strategy: 'overlay' | 'copy' | undefined; tree: string | undefined; forwarderPort: number } {
    return { strategy: this.strategy, tree: this.layers?.tree, forwarderPort: this.forwarderPort };
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    const network = (this.mode === 'strict' ? this.startNetwork() : Promise.resolve()).then(() => {
      this.timings.networkMs = Date.now() - t0;
    });
    const shim = this.writeShim();
    const exposure = this.provider.exposure().then((e) => {
      this.exposed = e;
    });
    exposure.catch(() => undefined);
    // Awaited below; until then a failure must not surface as an unhandled rejection.
    network.catch(() => undefined);
    shim.catch(() => undefined);
    const layers = await prepareLayers({
      cacheDir: join(this.provider.root, 'cache'),
      sourceDir: this.spec.sourceDir,
      baseCommit: this.spec.baseCommit,
      mode: this.mode,
      scratchDir: this.attemptDir,
    });
    this.layers = layers;
    const t1 = Date.now();
    this.timings.layersMs = t1 - t0;
    await exposure;
    const src = layers.sourceDir;
    const leak = this.exposed.paths.find((p) => p === src || src.startsWith(`${p}/`) || p.startsWith(`${src}/`));
    if (leak) throw new SandboxSetupError(`exposed path ${leak} would show the task's source repository ${src} (and its history) inside the sandbox`);
    this.strategy = await this.provider.materialize(layers.lowers, this.attemptDir, this.workdir);
    const t2 = Date.now();
    this.timings.workspaceMs = t2 - t1;
    if (layers.strict) {
      const audit = await auditHistory({
        gitDir: join(this.workdir, '.git'),
        tree: layers.tree,
        rootCommit: layers.strict.rootCommit,
        allowedObjects: layers.strict.allowedObjects,
        fsck: this.provider.options.fsckAudit ?? true,
      });
      if (!audit.ok) throw new SandboxSetupError(`history audit failed: ${audit.problems.join('; ')}`, audit);
    }
    this.timings.auditMs = Date.now() - t2;
    await Promise.all([network, shim, exposure]);
  }

  private async writeShim(): Promise<void> {
    const bin = join(this.tmpDir, '.flywheel', 'bin');
    await mkdir(bin, { recursive: true });
    await mkdir(join(this.tmpDir, 'home'), { recursive: true });
    await writeFile(join(bin, 'git'), GIT_SHIM);
    await chmod(join(bin, 'git'), 0o755);
    await writeFile(join(this.tmpDir, '.flywheel', 'git.log'), '');
    await chmod(this.tmpDir, 0o1777);
  }

  private async startNetwork(): Promise<void> {
    const socketPath = join(this.attemptDir, 'egress.sock');
    this.proxy = await startEgressProxy({
      socketPath,
      allowList: this.spec.networkAllowList,
      onObservation: (o) => this.observed.push(o),
    });
    const child = spawn(
      'unshare',
      ['--net', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, '--no-warnings', FORWARDER, socketPath],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.forwarder = child;
    this.forwarderPort = await new Promise<number>((resolvePort, reject) => {
      let text = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        const line = text.split('\n')[0];
        if (text.includes('\n') && line) resolvePort(Number(line));
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`egress forwarder exited (${code}): ${err.trim()}`)));
      child.on('error', reject);
    });
  }

  private environment(): Record<string, string> {
    const env: Record<string, string> = {
      PATH: `/tmp/.flywheel/bin:${this.exposed.binDirs.map((d) => `${d}:`).join('')}${dirname(process.execPath)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: '/tmp/home',
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_PAGER: 'cat',
      PAGER: 'cat',
    };
    if (this.mode === 'strict') {
      const proxy = `http://127.0.0.1:${this.forwarderPort}`;
      // Loopback names stay direct unless the allow-list names one (then it must go through the proxy).
      const allowed = this.spec.networkAllowList.join(' ').toLowerCase();
      const noProxy = ['localhost', '127.0.0.1', '::1'].filter((h) => !allowed.includes(h)).join(',');
      for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
        env[k] = proxy;
        env[k.toLowerCase()] = proxy;
      }
      env.NO_PROXY = noProxy;
      env.no_proxy = noProxy;
      env.NODE_USE_ENV_PROXY = '1';
    }
    return { ...env, ...(this.spec.env ?? {}) };
  }

  private hiddenPaths(): string[] {
    const hide = [this.provider.root, '/root', ...(this.provider.options.hide ?? [])];
    if (this.layers && !this.layers.needsSource) hide.push(this.layers.sourceDir);
    return hide;
  }

  exec(command: string, options: { cwd?: string; timeoutMs?: number; stdin?: string } = {}): Promise<ExecResult> {
    return this.run(command, options, false);
  }

  private async run(
    command: string,
    options: { cwd?: string; timeoutMs?: number; stdin?: string },
    internal: boolean,
  ): Promise<ExecResult> {
    if (this.closing) throw new FlywheelError('SandboxClosed', 'the sandbox is closed');
    const cwd = resolve(this.workdir, options.cwd ?? '.');
    const rel = relative(this.workdir, cwd);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new FlywheelError('ValidationError', `cwd ${cwd} is outside the workspace`);
    if (!internal) this.noteOutsideReads(command);
    const limits = this.spec.limits;
    const rlimits: string[] = [];
    if (limits.cpuSeconds) rlimits.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`);
    if (limits.memoryBytes) rlimits.push(`--as=${limits.memoryBytes}`);
    const outputCap = internal ? 512 * 1024 * 1024 : limits.outputBytes;
    const timeoutMs = options.timeoutMs ?? limits.commandTimeoutMs;

    const unshareArgs = ['--pid', '--fork', '--kill-child', '--mount', '--mount-proc', '--propagation', 'private', '--', 'sh', '-c', SETUP];
    const [file, args] =
      this.mode === 'strict' && this.forwarder?.pid
        ? ['nsenter', [`--net=/proc/${this.forwarder.pid}/ns/net`, '--', 'unshare', ...unshareArgs]]
        : ['unshare', unshareArgs];
    const started = Date.now();
    const child = spawn(file, args as string[], {
      env: {
        ...this.environment(),
        FW_TMP: this.tmpDir,
        FW_WORKDIR: this.workdir,
        FW_HIDE: this.hiddenPaths().join('\n'),
        FW_EXPOSE: this.exposed.paths.join('\n'),
        FW_CWD: cwd,
        FW_RLIMITS: rlimits.join(' ') || '--core=0',
        FW_COMMAND: command,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let truncated = false;
    let limit: ExecResult['limit'];
    const killAt = outputCap * 4 + 1024 * 1024;
    const take = (sink: Buffer[]) => (d: Buffer) => {
      seen += d.length;
      if (kept < outputCap) {
        const room = outputCap - kept;
        sink.push(room >= d.length ? d : d.subarray(0, room));
        kept += Math.min(room, d.length);
      }
      if (seen > outputCap) truncated = true;
      if (seen > killAt && !limit) {
        limit = 'output';
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', take(out));
    child.stderr.on('data', take(err));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
    const timer = setTimeout(() => {
      if (!limit) limit = 'time';
      child.kill('SIGKILL');
    }, timeoutMs);
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.on('close', (c, s) => done({ code: c, signal: s }));
      child.on('error', () => done({ code: null, signal: null }));
    });
    clearTimeout(timer);
    this.running.delete(child);
    const durationMs = Date.now() - started;
    const stdout = Buffer.concat(out).toString('utf8');
    const stderr = Buffer.concat(err).toString('utf8');

    // The namespace's first process is a shell, so a command killed by a signal shows as 128 + n.
    let exitCode = code;
    let sig: string | null = signal;
    if (code !== null && code > 128 && code <= 128 + 64) {
      sig = signalName(code - 128);
      if (sig) exitCode = null;
    }
    if (!limit && limits.cpuSeconds && (sig === 'SIGXCPU' || (sig === 'SIGKILL' && durationMs >= limits.cpuSeconds * 900))) {
      limit = 'cpu';
    }
    if (!limit && limits.memoryBytes && (exitCode !== 0 || sig) && MEMORY_HINT.test(stderr + stdout)) limit = 'memory';
    if (!internal) await this.harvestGitLog();
    return { exitCode, signal: sig, stdout, stderr, truncated, limit, durationMs };
  }

  /** Cheap detection of reads outside the workspace: the command names a covered path. */
  private noteOutsideReads(command: string): void {
    // The workspace itself lies under the (covered) sandbox root: its own path is not a read outside.
    let text = command.replaceAll(this.workdir, '<workspace>');
    // Exposed toolchains (a python under /root) are readable by design.
    for (const p of this.exposed.paths) text = text.replaceAll(p, '<exposed>');
    for (const path of this.hiddenPaths()) {
      if (path !== '/' && text.includes(path)) {
        this.observed.push({ kind: 'read.outside-workspace', at: new Date().toISOString(), detail: { path, command } });
      }
    }
  }

  private async harvestGitLog(): Promise<void> {
    const file = join(this.tmpDir, '.flywheel', 'git.log');
    const text = await readFile(file, 'utf8').catch(() => '');
    if (!text) return;
    await truncate(file, 0).catch(() => undefined);
    this.observed.push(...parseGitLog(text, this.mode));
  }

  async diff(): Promise<string> {
    const tree = this.layers?.tree;
    if (!tree) throw new FlywheelError('SandboxClosed', 'the sandbox has no workspace');
    // Inside the sandbox: the agent controls .git/config (filters, fsmonitor), so the harness never runs git on it.
    const script = [
      'export GIT_INDEX_FILE=/tmp/.flywheel/diff-index GIT_CONFIG_GLOBAL=/dev/null',
      'rm -f "$GIT_INDEX_FILE"',
      `${REAL_GIT} read-tree ${tree} && ${REAL_GIT} add -A && ${REAL_GIT} -c core.quotepath=false diff --cached --binary --full-index ${tree}`,
      'code=$?; rm -f "$GIT_INDEX_FILE"; exit $code',
    ].join('\n');
    const r = await this.run(script, { timeoutMs: Math.max(this.spec.limits.commandTimeoutMs, 120_000) }, true);
    if (r.exitCode !== 0) throw new FlywheelError('SandboxDiffError', `git diff failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  observations(): SandboxObservation[] {
    return [...this.observed];
  }

  /**
   * The fast path of the re-audit on an overlay workspace: every object the agent can have added is in a file of the
   * overlay's upper layer (the lower layers were audited before the attempt), so only the loose objects and pack
   * indexes written there are read — on the host, from files, without running git on the agent's repository.
   * Undefined when the upper layer changes how the repository finds objects (`.git` replaced, a symlink, an
   * alternates or `commondir` file): then the full listing inside the sandbox decides.
   */
  private async objectsWrittenToUpper(): Promise<Set<string> | undefined> {
    const upperGit = join(this.attemptDir, 'upper', '.git');
    const st = await lstat(upperGit).catch(() => undefined);
    if (!st) return new Set();
    if (!st.isDirectory()) return undefined;
    const ids = new Set<string>();
    for (const entry of await readdir(upperGit, { recursive: true, withFileTypes: true })) {
      if (entry.isSymbolicLink()) return undefined;
      const rel = relative(upperGit, join(entry.parentPath, entry.name));
      if (/^(objects\/info\/(http-)?alternates|commondir)$/.test(rel)) return undefined;
      if (!entry.isFile()) continue;
      const loose = /^objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/.exec(rel);
      if (loose) ids.add(`${loose[1]}${loose[2]}`);
      else if (/^objects\/pack\/[^/]+\.idx$/.test(rel)) {
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

  /**
   * Strict mode, after the agent: lists every object the workspace repository can read (inside the sandbox, since the
   * agent controls its config), keeps those outside the base tree, and asks the trusted source repository which of
   * them its history holds. A commit or tag of that history means history came back; see `HistoryReaudit`.
   */
  async reaudit(): Promise<HistoryReaudit | undefined> {
    const strict = this.layers?.strict;
    if (this.mode !== 'strict' || !strict || !this.layers) return undefined;
    const started = Date.now();
    const problems: string[] = [];
    const fresh = new Set<string>();
    const fromUpper = this.strategy === 'overlay' ? await this.objectsWrittenToUpper() : undefined;
    if (fromUpper) {
      for (const id of fromUpper) if (id !== strict.rootCommit && !strict.allowedObjects.has(id)) fresh.add(id);
    } else {
      const script = [
        'export GIT_CONFIG_GLOBAL=/dev/null',
        `${REAL_GIT} cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' || exit 3`,
        'for f in objects/info/alternates objects/info/http-alternates; do [ -e ".git/$f" ] && echo "ALT $f"; done; exit 0',
      ].join('\n');
      const r = await this.run(script, { timeoutMs: Math.max(this.spec.limits.commandTimeoutMs, 120_000) }, true);
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
    const sourceGit = join(this.layers.sourceDir, '.git');
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

  close(): Promise<void> {
    this.closing ??= this.teardown();
    return this.closing;
  }

  private async teardown(): Promise<void> {
    const started = Date.now();
    for (const child of this.running) child.kill('SIGKILL');
    if (this.forwarder && this.forwarder.exitCode === null && this.forwarder.signalCode === null) {
      const f = this.forwarder;
      await new Promise<void>((done) => {
        f.once('exit', () => done());
        f.kill('SIGKILL');
      });
    }
    await this.proxy?.close();
    if (this.strategy === 'overlay') await unmount(this.workdir);
    await rm(this.attemptDir, { recursive: true, force: true });
    this.timings.closeMs = Date.now() - started;
  }
}
