/**
 * Builds the tree an attempt is graded in, never the agent's workspace: the files of the base commit (read from the
 * task's repository through a private index, so neither its HEAD nor its index moves), the agent's diff applied with
 * `git apply`, then every test file, runner config and dependency manifest (requirements, lockfiles, the dependency
 * sections of pyproject.toml / package.json: the graded environment is resolved from this tree, so it is the base
 * tree's) the diff touched put back to the base version, the task's test
 * patch applied and the task's own test files written: the task's pristine tests are what runs. New test files the
 * agent added are kept apart (`agentTests`: left out of the tree, recorded, not flagged). The tree has no `.git`.
 *
 * `git apply` runs with GIT_CEILING_DIRECTORIES at the tree, so it patches the tree as plain files even when the temp
 * directory sits inside some repository; it refuses paths outside the tree and writes through no symlink.
 */
import { randomBytes } from 'node:crypto';
import { chmod, cp, lstat, mkdir, mkdtemp, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { git } from '../git/run-git.ts';
import { compiledFiles, exactApplyPattern, moduleSourceOf, type DroppedFile } from './compiled-files.ts';
import { GradingSetupError } from './grading-setup-error.ts';
import { dependencySectionChanged, runnerSectionChanged } from './runner-sections.ts';
import { classifyPath, isSectionedRunnerConfig, type TestPathKind } from './test-paths.ts';

export type ApplyMode = 'empty' | 'exact' | 'whitespace-tolerant';

export interface RevertedFile {
  path: string;
  kind: TestPathKind;
  /** `restored` to the base version, or `removed` because the base had no such file. */
  action: 'restored' | 'removed';
}

export interface GradingTree {
  /** Temp directory holding the tree and scratch files; `cleanup()` removes it. */
  root: string;
  /** The tree the tests run in. */
  dir: string;
  /** The commit the tree holds, when the source is a git repository. */
  baseCommit?: string;
  /** Every path the agent's diff touched (both names of a rename). */
  touched: string[];
  reverted: RevertedFile[];
  /**
   * New test files the agent added (tests by name, not the task's, absent from the base): kept apart — left out of
   * the tree the verdict runs in, recorded here, never counted as tampering.
   */
  agentTests: string[];
  /**
   * Compiled bytecode and caches of the diff that were not applied (see `compiled-files.ts`); those with `shadowing`
   * would have stood in for a source module.
   */
  dropped: DroppedFile[];
  /** Paths of the task's test files as they stand in the tree (task list, test patch, provided contents). */
  taskTestPaths: string[];
  applyMode: ApplyMode;
  cleanup(): Promise<void>;
}

export type PrepareResult =
  | { ok: true; tree: GradingTree }
  | { ok: false; reason: 'patch-does-not-apply'; detail: string; tree: GradingTree };

export interface PrepareGradingTreeInput {
  /** The task's repository (a git checkout, or plain files when `baseCommit` is absent and it has no `.git`). */
  sourceDir: string;
  /** Commit to start from; `HEAD` of a git source when absent. */
  baseCommit?: string;
  /** The agent's changes as a git patch (`git diff --binary`). */
  diff: string;
  /** The task's test files (task.testFiles). */
  testFiles: readonly string[];
  /** The task's test patch (task.testPatch), applied after the revert. */
  testPatch?: string;
  /** Test file contents the task ships outside the repository (a Harbor `tests/` folder): path → content. */
  testFileContents?: Record<string, string | Uint8Array>;
}

type Saved = { kind: 'absent' } | { kind: 'file'; content: Buffer; mode: number } | { kind: 'symlink'; target: string };

/** Paths a patch touches, as git itself reads it (`--numstat -z`: renames give both names). */
async function patchPaths(dir: string, env: Record<string, string>, patch: string): Promise<{ ok: true; paths: string[] } | { ok: false; detail: string }> {
  const r = await git(['apply', '--numstat', '-z', '-'], { cwd: dir, env, input: patch, allowFailure: true });
  if (r.code !== 0) return { ok: false, detail: r.stderr.trim() || `git apply --numstat exited ${r.code}` };
  const paths = new Set<string>();
  const parts = r.stdout.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const rec = parts[i]!;
    if (rec === '') continue;
    const m = /^(?:-|\d+)\t(?:-|\d+)\t(.*)$/s.exec(rec);
    if (!m) continue;
    if (m[1] === '') {
      // Rename or copy: the two names follow as their own NUL-terminated fields.
      paths.add(parts[i + 1]!);
      paths.add(parts[i + 2]!);
      i += 2;
    } else paths.add(m[1]!);
  }
  return { ok: true, paths: [...paths].filter((p) => p !== '') };
}

async function save(dir: string, path: string): Promise<Saved> {
  const full = join(dir, path);
  const st = await lstat(full).catch(() => undefined);
  if (!st) return { kind: 'absent' };
  if (st.isSymbolicLink()) return { kind: 'symlink', target: await readlink(full) };
  if (st.isFile()) return { kind: 'file', content: await readFile(full), mode: st.mode & 0o777 };
  return { kind: 'absent' };
}

async function readText(dir: string, path: string): Promise<string | undefined> {
  const st = await lstat(join(dir, path)).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  return readFile(join(dir, path), 'utf8');
}

/** Makes every parent of `path` a real directory inside `dir` (a symlink or file in the way is removed). */
async function realParents(dir: string, path: string): Promise<void> {
  const parts = path.split('/').slice(0, -1);
  let cur = dir;
  for (const part of parts) {
    cur = join(cur, part);
    const st = await lstat(cur).catch(() => undefined);
    if (st?.isDirectory()) continue;
    if (st) await rm(cur, { force: true, recursive: true });
    await mkdir(cur);
  }
}

async function restore(dir: string, path: string, saved: Saved): Promise<void> {
  const full = join(dir, path);
  if (!resolve(full).startsWith(`${resolve(dir)}/`)) throw new GradingSetupError(`refusing to write outside the tree: ${path}`);
  await realParents(dir, path);
  await rm(full, { force: true, recursive: true });
  if (saved.kind === 'file') {
    await writeFile(full, saved.content);
    await chmod(full, saved.mode);
  } else if (saved.kind === 'symlink') await symlink(saved.target, full);
}

async function applyPatch(dir: string, env: Record<string, string>, patch: string, tolerant: boolean, exclude: readonly string[] = []) {
  const args = ['apply', '--whitespace=nowarn', ...(tolerant ? ['--ignore-whitespace', '--recount'] : []), ...exclude.map((p) => `--exclude=${exactApplyPattern(p)}`), '-'];
  return git(args, { cwd: dir, env, input: patch, allowFailure: true });
}

async function materialize(root: string, dir: string, sourceDir: string, baseCommit: string | undefined): Promise<string | undefined> {
  const inRepo = await git(['rev-parse', '--is-inside-work-tree'], { cwd: sourceDir, allowFailure: true });
  const isBare = await git(['rev-parse', '--is-bare-repository'], { cwd: sourceDir, allowFailure: true });
  // A plain folder inside another repository (an example suite's repo in a checkout) is plain files, as the
  // workspace takes it (workspace-layers: a source is git when it has its own .git): not that repository's tree.
  const top = inRepo.code === 0 && inRepo.stdout.trim() === 'true' ? await git(['rev-parse', '--show-toplevel'], { cwd: sourceDir, allowFailure: true }) : undefined;
  const ownTree = top !== undefined && top.code === 0 && top.stdout.trim() === (await realpath(sourceDir));
  const gitSource = ownTree || (isBare.code === 0 && isBare.stdout.trim() === 'true');
  if (!gitSource) {
    if (baseCommit !== undefined) throw new GradingSetupError(`${sourceDir} is not a git repository, but base commit ${baseCommit} was asked for`);
    await cp(sourceDir, dir, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.split('/').includes('.git') });
    return undefined;
  }
  const rev = await git(['rev-parse', '--verify', '--quiet', `${baseCommit ?? 'HEAD'}^{commit}`], { cwd: sourceDir, allowFailure: true });
  if (rev.code !== 0) throw new GradingSetupError(`base commit ${baseCommit ?? 'HEAD'} is not in ${sourceDir}`);
  const sha = rev.stdout.trim();
  const env = { GIT_INDEX_FILE: join(root, 'index') };
  await git(['read-tree', sha], { cwd: sourceDir, env });
  await git([`--work-tree=${dir}`, 'checkout-index', '--all', '--force'], { cwd: sourceDir, env });
  return sha;
}

/**
 * @example
 * const prepared = await prepareGradingTree({ sourceDir, baseCommit, diff, testFiles: task.testFiles, testPatch: task.testPatch });
 * try { if (prepared.ok) … } finally { await prepared.tree.cleanup(); }
 */
export async function prepareGradingTree(input: PrepareGradingTreeInput): Promise<PrepareResult> {
  const root = await mkdtemp(join(tmpdir(), 'fw-grade-'));
  const dir = join(root, 'tree');
  await mkdir(dir);
  const cleanup = () => rm(root, { recursive: true, force: true });
  try {
    const sha = await materialize(root, dir, input.sourceDir, input.baseCommit);
    const env = { GIT_CEILING_DIRECTORIES: root };
    const tree: GradingTree = { root, dir, ...(sha ? { baseCommit: sha } : {}), touched: [], reverted: [], agentTests: [], dropped: [], taskTestPaths: [], applyMode: 'empty', cleanup };

    const testPatchPaths: string[] = [];
    if (input.testPatch && input.testPatch.trim() !== '') {
      const tp = await patchPaths(dir, env, input.testPatch);
      if (!tp.ok) throw new GradingSetupError(`the task's test patch cannot be read: ${tp.detail}`);
      testPatchPaths.push(...tp.paths);
    }
    const taskFiles = [...input.testFiles, ...testPatchPaths, ...Object.keys(input.testFileContents ?? {})];

    if (input.diff.trim() !== '') {
      const touched = await patchPaths(dir, env, input.diff);
      if (!touched.ok) return { ok: false, reason: 'patch-does-not-apply', detail: touched.detail, tree };
      tree.touched = touched.paths;
      // Compiled files and caches: never applied. Whether one shadows a source module depends on the base tree too.
      const present = new Set(touched.paths);
      for (const path of touched.paths) {
        const source = moduleSourceOf(path);
        if (source !== undefined && !present.has(source) && (await lstat(join(dir, source)).catch(() => undefined))?.isFile()) present.add(source);
      }
      tree.dropped = compiledFiles(input.diff, touched.paths, (p) => present.has(p));
      const excluded = tree.dropped.map((d) => d.path);
      const excludedSet = new Set(excluded);
      const candidates = new Map<string, { kind: TestPathKind; saved: Saved }>();
      for (const path of touched.paths) {
        if (excludedSet.has(path)) continue;
        const kind = classifyPath(path, taskFiles);
        if (kind) candidates.set(path, { kind, saved: await save(dir, path) });
      }
      const exact = await applyPatch(dir, env, input.diff, false, excluded);
      if (exact.code === 0) tree.applyMode = 'exact';
      else {
        const tolerant = await applyPatch(dir, env, input.diff, true, excluded);
        if (tolerant.code !== 0) return { ok: false, reason: 'patch-does-not-apply', detail: exact.stderr.trim() || `git apply exited ${exact.code}`, tree };
        tree.applyMode = 'whitespace-tolerant';
      }
      for (const [path, candidate] of candidates) {
        const { saved } = candidate;
        let kind = candidate.kind;
        if (kind === 'runner-config' && isSectionedRunnerConfig(path)) {
          const before = saved.kind === 'file' ? saved.content.toString('utf8') : undefined;
          const after = await readText(dir, path);
          if (!runnerSectionChanged(path, before, after)) {
            if (!dependencySectionChanged(path, before, after)) continue;
            kind = 'dependency-manifest';
          }
        }
        await restore(dir, path, saved);
        if (kind === 'test-file' && saved.kind === 'absent') {
          tree.agentTests.push(path);
          continue;
        }
        tree.reverted.push({ path, kind, action: saved.kind === 'absent' ? 'removed' : 'restored' });
      }
    }

    if (input.testPatch && input.testPatch.trim() !== '') {
      const r = await applyPatch(dir, env, input.testPatch, false);
      if (r.code !== 0) throw new GradingSetupError(`the task's test patch does not apply to the base commit: ${r.stderr.trim()}`);
    }
    for (const [path, content] of Object.entries(input.testFileContents ?? {})) {
      await restore(dir, path, { kind: 'file', content: Buffer.from(content), mode: 0o644 });
    }
    const present: string[] = [];
    for (const p of new Set(taskFiles)) if ((await lstat(join(dir, p)).catch(() => undefined))?.isFile()) present.push(p);
    tree.taskTestPaths = present;
    return { ok: true, tree };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** A fresh, unguessable report directory name inside the tree (the diff cannot have created it). */
export function reportDirName(): string {
  return `.flywheel-grading-${randomBytes(8).toString('hex')}`;
}
