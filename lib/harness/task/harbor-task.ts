import { mkdir, readFile, readdir, stat, writeFile, chmod } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { ValidationError } from '../../errors.ts';
import { parseTask, type Task } from './task-schema.ts';

/**
 * Harbor / Terminal-Bench task folders (harborframework.com/docs/tasks):
 * ```
 * <task>/instruction.md      the agent's instruction
 * <task>/task.toml           version, [metadata], [verifier].timeout_sec, [agent].timeout_sec, [environment]
 * <task>/environment/        Dockerfile (or the workspace itself)
 * <task>/tests/test.sh       the verifier; writes the reward to /logs/verifier/reward.txt
 * <task>/solution/solve.sh   optional reference solution
 * ```
 * Flywheel's own fields (split, visibility, failToPass, …) ride in `[metadata.flywheel]`, which Harbor treats as
 * free-form metadata, so an exported folder still runs in Harbor and imports back unchanged.
 */
export const HARBOR_REWARD_FILE = '/logs/verifier/reward.txt';

interface HarborToml {
  version?: string;
  schema_version?: string;
  task?: { name?: string; description?: string };
  metadata?: Record<string, unknown> & { flywheel?: Record<string, unknown> };
  verifier?: { timeout_sec?: number; env?: Record<string, string> };
  agent?: { timeout_sec?: number };
  environment?: { cpus?: number; memory_mb?: number; storage_mb?: number; build_timeout_sec?: number; allow_internet?: boolean; docker_image?: string };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function listFiles(dir: string, root = dir): Promise<string[]> {
  if (!(await exists(dir))) return [];
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(full, root)));
    else out.push(relative(root, full));
  }
  return out.sort();
}

/**
 * Reads a Harbor task folder into a Task (validated). Defaults when the folder carries no Flywheel metadata:
 * suite from `defaults.suite`, split `held-out`, visibility `public`, repo = the folder's `environment/`,
 * test command `bash tests/test.sh`, failToPass `["tests/test.sh"]` (the verifier as one test).
 *
 * @example
 * const task = await importHarborTask('./tasks/hello-world', { suite: 'terminal-bench' });
 */
export async function importHarborTask(dir: string, defaults: { suite?: string; split?: 'train' | 'held-out'; visibility?: 'public' | 'private' } = {}): Promise<Task> {
  const tomlPath = join(dir, 'task.toml');
  const instructionPath = join(dir, 'instruction.md');
  const issues: Array<{ path: string; message: string }> = [];
  if (!(await exists(tomlPath))) issues.push({ path: 'task.toml', message: 'missing' });
  if (!(await exists(instructionPath))) issues.push({ path: 'instruction.md', message: 'missing' });
  if (issues.length > 0) throw new ValidationError(`${dir} is not a Harbor task folder`, issues);

  let toml: HarborToml;
  try {
    toml = parseToml(await readFile(tomlPath, 'utf8')) as HarborToml;
  } catch (error) {
    throw new ValidationError(`${tomlPath}: ${(error as Error).message}`, [{ path: 'task.toml', message: 'invalid TOML' }]);
  }
  const fw = toml.metadata?.flywheel ?? {};
  const { flywheel: _fw, ...metadata } = toml.metadata ?? {};
  const testFiles = (await listFiles(join(dir, 'tests'))).map((f) => `tests/${f}`);
  const goldPath = join(dir, 'solution', 'solution.patch');
  const base = dir.split('/').filter(Boolean).at(-1) ?? 'task';
  const agentTimeout = toml.agent?.timeout_sec;
  // Harbor builds the task's container from environment/Dockerfile (or pulls [environment].docker_image).
  const dockerfile = join(dir, 'environment', 'Dockerfile');
  const environment = fw['environment'] ?? {
    ...(typeof toml.environment?.docker_image === 'string' && toml.environment.docker_image ? { image: toml.environment.docker_image } : {}),
    ...((await exists(dockerfile)) ? { dockerfile } : {}),
  };
  const fwLimits = (fw['limits'] as Record<string, unknown> | undefined) ?? {};
  return parseTask(
    {
      schemaVersion: 1,
      id: fw['id'] ?? toml.task?.name ?? base,
      suite: fw['suite'] ?? defaults.suite ?? 'harbor',
      split: fw['split'] ?? defaults.split ?? 'held-out',
      visibility: fw['visibility'] ?? defaults.visibility ?? 'public',
      repo: fw['repo'] ?? { kind: 'local', path: join(dir, 'environment') },
      instruction: await readFile(instructionPath, 'utf8'),
      ...(fw['setupCommand'] !== undefined ? { setupCommand: fw['setupCommand'] } : {}),
      testCommand: fw['testCommand'] ?? 'bash tests/test.sh',
      failToPass: fw['failToPass'] ?? ['tests/test.sh'],
      passToPass: fw['passToPass'] ?? [],
      testFiles: fw['testFiles'] ?? testFiles,
      ...(fw['testPatch'] !== undefined ? { testPatch: fw['testPatch'] } : {}),
      ...((await exists(goldPath)) ? { goldPatch: await readFile(goldPath, 'utf8') } : {}),
      limits: { ...fwLimits, ...(agentTimeout !== undefined && fwLimits['wallClockSeconds'] === undefined ? { wallClockSeconds: agentTimeout } : {}) },
      networkAllowList: fw['networkAllowList'] ?? (toml.environment?.allow_internet ? ['*'] : []),
      ...(environment && Object.keys(environment as object).length > 0 ? { environment } : {}),
      origin: fw['id'] !== undefined ? fw['origin'] : { kind: 'harbor', ref: dir },
      metadata: { ...((fw['metadata'] as Record<string, unknown>) ?? metadata) },
    },
    tomlPath,
  );
}

/**
 * Writes a Task as a Harbor task folder. `tests/test.sh` runs the task's test command and writes 1 or 0 to the
 * reward file; `files` adds the test files' contents (path → text) under the folder.
 */
export async function exportHarborTask(task: Task, dir: string, files: Record<string, string> = {}): Promise<void> {
  await mkdir(join(dir, 'tests'), { recursive: true });
  await mkdir(join(dir, 'environment'), { recursive: true });
  const toml = {
    version: '1.0',
    metadata: {
      ...Object.fromEntries(Object.entries(task.metadata).filter(([, v]) => v !== null && v !== undefined)),
      flywheel: stripUndefined({
        schemaVersion: task.schemaVersion,
        id: task.id,
        suite: task.suite,
        split: task.split,
        visibility: task.visibility,
        repo: task.repo,
        setupCommand: task.setupCommand,
        testCommand: task.testCommand,
        failToPass: task.failToPass,
        passToPass: task.passToPass,
        testFiles: task.testFiles,
        testPatch: task.testPatch,
        limits: task.limits,
        networkAllowList: task.networkAllowList,
        environment: task.environment,
        origin: task.origin,
        metadata: task.metadata,
      }),
    },
    verifier: { timeout_sec: task.limits.commandSeconds },
    agent: { timeout_sec: task.limits.wallClockSeconds },
    environment: { allow_internet: task.networkAllowList.length > 0, ...(task.environment?.image ? { docker_image: task.environment.image } : {}) },
  };
  await writeFile(join(dir, 'task.toml'), stringifyToml(toml));
  await writeFile(join(dir, 'instruction.md'), task.instruction);
  if (task.goldPatch !== undefined) {
    await mkdir(join(dir, 'solution'), { recursive: true });
    await writeFile(join(dir, 'solution', 'solution.patch'), task.goldPatch);
    await writeFile(join(dir, 'solution', 'solve.sh'), '#!/bin/bash\nset -e\ngit apply "$(dirname "$0")/solution.patch"\n');
  }
  if (!Object.keys(files).includes('tests/test.sh')) {
    const script = `#!/bin/bash\n# Generated by Flywheel: runs the task's test command and writes the reward Harbor reads.\nREWARD_FILE="\${REWARD_FILE:-${HARBOR_REWARD_FILE}}"\nmkdir -p "$(dirname "$REWARD_FILE")"\nif ${task.testCommand}; then echo 1 > "$REWARD_FILE"; else echo 0 > "$REWARD_FILE"; fi\n`;
    await writeFile(join(dir, 'tests', 'test.sh'), script);
    await chmod(join(dir, 'tests', 'test.sh'), 0o755);
  }
  // The task's Dockerfile becomes the folder's environment/Dockerfile (unless `files` brings one).
  if (task.environment?.dockerfile && !Object.keys(files).includes('environment/Dockerfile')) {
    const text = await readFile(task.environment.dockerfile, 'utf8').catch(() => undefined);
    if (text !== undefined) await writeFile(join(dir, 'environment', 'Dockerfile'), text);
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

function stripUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
}
