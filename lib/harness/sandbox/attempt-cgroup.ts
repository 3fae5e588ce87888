/**
 * The control group of one sandbox attempt: every command of the attempt (the agent's, the harness's diff) runs in
 * it, so its limits hold for the attempt as a whole, not per process: memory (the kernel's OOM killer acts inside the
 * group), the number of processes and threads (`pids.max`, which stops a fork bomb), and CPU bandwidth.
 *
 * cgroup v1 (one hierarchy per controller, as here): the group is `<our group>/flywheel/<attempt id>` in the memory,
 * pids and cpu hierarchies, under the group this process itself is in (read from /proc/self/cgroup). cgroup v2 (one
 * unified hierarchy at /sys/fs/cgroup): `<our group>/flywheel/<attempt id>` when our group can delegate the memory,
 * pids and cpu controllers, else `/flywheel/<attempt id>` under the root (a group holding processes cannot hand
 * controllers down, the "no internal processes" rule).
 *
 * Commands enter by writing their pid to each `cgroup.procs` before they exec (see `procsFiles`). The counters that
 * say a limit was hit — `memory.oom_control`'s or `memory.events`' `oom_kill`, `pids.events`' `max` — are read before
 * and after each command.
 */
import { mkdir, readFile, readdir, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlywheelError } from '../../errors.ts';
import { SandboxErrorNames } from './sandbox-errors.ts';

/** The cgroup could not be made or configured (not root, no cgroup file system, a controller missing). */
export class SandboxCgroupError extends FlywheelError {
  constructor(message: string, options?: ErrorOptions) {
    super(SandboxErrorNames.cgroup, message, options);
  }
}

export interface CgroupLimits {
  /** Bytes of memory (page cache and tmpfs pages written by the attempt included). */
  memoryBytes: number;
  /** Processes and threads at once. */
  processes: number;
  /** CPU bandwidth in CPUs (1.5 = one and a half cores' worth of time per period). */
  cpus: number;
}

/** What the limit counters read at one moment; compare two to learn what a command hit. */
export interface CgroupCounters {
  oomKills: number;
  pidsMax: number;
}

const ROOT = '/sys/fs/cgroup';
const CGROUP2_SUPER_MAGIC = 0x63677270;
const CPU_PERIOD_US = 100_000;

type Layout = { version: 1; dirs: { memory: string; pids: string; cpu: string } } | { version: 2; parent: string };

let layoutPromise: Promise<Layout> | undefined;

async function isCgroup2(path: string): Promise<boolean> {
  const { statfs } = await import('node:fs/promises');
  return statfs(path).then((s) => s.type === CGROUP2_SUPER_MAGIC, () => false);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/** Where attempt groups go on this host, found once per process. */
function layout(): Promise<Layout> {
  layoutPromise ??= (async (): Promise<Layout> => {
    const self = await readFile('/proc/self/cgroup', 'utf8');
    const lines = self.split('\n').filter(Boolean).map((l) => {
      const [, controllers = '', path = '/'] = l.split(':');
      return { controllers: controllers.split(','), path };
    });
    if (await isCgroup2(ROOT)) {
      const ours = lines.find((l) => l.controllers.length === 1 && l.controllers[0] === '')?.path ?? '/';
      const needed = ['memory', 'pids', 'cpu'];
      for (const candidate of ours === '/' ? ['/'] : [ours, '/']) {
        const dir = join(ROOT, candidate);
        const available = (await readFile(join(dir, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
        if (!needed.every((c) => available.includes(c))) continue;
        const enabled = (await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '')).split(/\s+/);
        const missing = needed.filter((c) => !enabled.includes(c));
        const ok = missing.length === 0 || (await writeFile(join(dir, 'cgroup.subtree_control'), missing.map((c) => `+${c}`).join(' ')).then(() => true, () => false));
        if (!ok) continue;
        const parent = join(dir, 'flywheel');
        await mkdir(parent, { recursive: true });
        const inner = (await readFile(join(parent, 'cgroup.subtree_control'), 'utf8').catch(() => '')).split(/\s+/);
        const innerMissing = needed.filter((c) => !inner.includes(c));
        if (innerMissing.length > 0) await writeFile(join(parent, 'cgroup.subtree_control'), innerMissing.map((c) => `+${c}`).join(' '));
        return { version: 2, parent };
      }
      throw new SandboxCgroupError(`cgroup v2: cannot delegate the ${needed.join(', ')} controllers under ${ours} or the root`);
    }
    const dirs: Record<string, string> = {};
    for (const controller of ['memory', 'pids', 'cpu'] as const) {
      const line = lines.find((l) => l.controllers.includes(controller));
      const mount = join(ROOT, controller);
      if (!line || !(await exists(join(mount, 'cgroup.procs')))) throw new SandboxCgroupError(`cgroup v1: no ${controller} hierarchy at ${mount}`);
      dirs[controller] = join(mount, line.path, 'flywheel');
    }
    return { version: 1, dirs: dirs as { memory: string; pids: string; cpu: string } };
  })();
  layoutPromise.catch(() => {
    layoutPromise = undefined;
  });
  return layoutPromise;
}

function counter(text: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

async function killAndRemove(dir: string): Promise<void> {
  if (!(await exists(dir))) return;
  for (const child of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (child.isDirectory()) await killAndRemove(join(dir, child.name));
  }
  // v2 (5.14+) kills the whole group at once; v1 has no such file, so its processes are killed one by one.
  const killFile = await exists(join(dir, 'cgroup.kill'));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (killFile) await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    const pids = (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    const removed = await rmdir(dir).then(
      () => true,
      (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
    );
    if (removed) return;
    if (Date.now() > deadline) throw new SandboxCgroupError(`cgroup ${dir} still busy after killing its processes`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

/**
 * @example
 * const group = await AttemptCgroup.create(attemptId, { memoryBytes: 4 << 30, processes: 512, cpus: 2 });
 * spawn('sh', ['-c', 'for f; do echo $$ > "$f"; done; exec …', 'sh', ...group.procsFiles]);
 * await group.remove();
 */
export class AttemptCgroup {
  /** The group's directory in each hierarchy (one on v2). */
  readonly dirs: string[];
  readonly version: 1 | 2;
  private readonly memoryDir: string;
  private readonly pidsDir: string;

  private constructor(version: 1 | 2, dirs: string[], memoryDir: string, pidsDir: string) {
    this.version = version;
    this.dirs = dirs;
    this.memoryDir = memoryDir;
    this.pidsDir = pidsDir;
  }

  /** Makes the attempt's group with these limits; a SandboxCgroupError when the host has no usable cgroups. */
  static async create(name: string, limits: CgroupLimits): Promise<AttemptCgroup> {
    if (!/^[\w.-]+$/.test(name)) throw new SandboxCgroupError(`bad cgroup name ${name}`);
    try {
      const where = await layout();
      const quota = Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
      if (where.version === 2) {
        const dir = join(where.parent, name);
        await mkdir(dir);
        const group = new AttemptCgroup(2, [dir], dir, dir);
        await writeFile(join(dir, 'memory.max'), String(limits.memoryBytes));
        await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => undefined);
        await writeFile(join(dir, 'pids.max'), String(limits.processes));
        await writeFile(join(dir, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
        return group;
      }
      const dirs = [where.dirs.memory, where.dirs.pids, where.dirs.cpu].map((d) => join(d, name));
      const [memory, pids, cpu] = dirs as [string, string, string];
      for (const dir of dirs) await mkdir(dir, { recursive: true });
      const group = new AttemptCgroup(1, dirs, memory, pids);
      try {
        await writeFile(join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Without swap accounting the file is absent; with it, swap may not stretch the limit.
        await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => undefined);
        await writeFile(join(pids, 'pids.max'), String(limits.processes));
        await writeFile(join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
        await writeFile(join(cpu, 'cpu.cfs_quota_us'), String(quota));
      } catch (error) {
        await group.remove().catch(() => undefined);
        throw error;
      }
      return group;
    } catch (error) {
      if (error instanceof SandboxCgroupError) throw error;
      throw new SandboxCgroupError(`cannot make the attempt's cgroup: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The `cgroup.procs` files a process writes its pid to, to enter the group (children follow it). */
  get procsFiles(): string[] {
    return this.dirs.map((d) => join(d, 'cgroup.procs'));
  }

  async counters(): Promise<CgroupCounters> {
    const [memory, pids] = await Promise.all([
      readFile(join(this.memoryDir, this.version === 2 ? 'memory.events' : 'memory.oom_control'), 'utf8').catch(() => ''),
      readFile(join(this.pidsDir, 'pids.events'), 'utf8').catch(() => ''),
    ]);
    return { oomKills: counter(memory, 'oom_kill'), pidsMax: counter(pids, 'max') };
  }

  /** Kills whatever still runs in the group and removes it. Idempotent. */
  async remove(): Promise<void> {
    await removeCgroupDirs(this.dirs);
  }
}

/** Kills every process in these groups (and their children) and removes them; used by `close` and by `sweep`. */
export async function removeCgroupDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) await killAndRemove(dir);
}
