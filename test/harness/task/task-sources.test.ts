import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { loadSuite } from '../../../lib/harness/eval/load-suite.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { prepareTaskSource } from '../../../lib/harness/task/prepare-task-source.ts';
import { parseTask, type Task, type TaskInput } from '../../../lib/harness/task/task-schema.ts';
import { gitSync } from '../../support/git-fixture.ts';
import { ANSWER, makeHistoryRepo, type HistoryRepo } from '../sandbox/history-repo.ts';

const task = (repo: TaskInput['repo'], id = 't/1'): Task =>
  parseTask({ schemaVersion: 1, id, suite: 's', split: 'train', visibility: 'public', repo, instruction: 'fix it', testCommand: 'true', failToPass: ['a'] });

const tar = (cwd: string, args: string[]) => execFileSync('tar', args, { cwd });

let work: string;
let repo: HistoryRepo;
let bare: string;
let ports: LocalPorts;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'fw-sources-'));
  repo = makeHistoryRepo(join(work, 'repo'));
  bare = join(work, 'remote.git');
  execFileSync('git', ['clone', '-q', '--bare', repo.dir, bare]);
  // A ref that only the server has (as a PR head would be).
  gitSync(bare, ['update-ref', 'refs/pull/1/head', repo.answerCommit]);
  ports = openLocalPorts(join(work, 'data'));
});
afterAll(() => {
  ports.close();
  rmSync(work, { recursive: true, force: true });
});

describe('git URL + commit sources', () => {
  it('a file:// URL is cloned once into the cache keyed by URL and commit, every ref kept, the commit checked', async () => {
    const cacheDir = join(work, 'cache-git');
    const t = task({ kind: 'git', url: `file://${bare}`, commit: repo.base });
    const dir = await prepareTaskSource(t, { cacheDir });
    expect(dir.startsWith(join(cacheDir, 'git'))).toBe(true);
    expect(gitSync(dir, ['rev-parse', 'HEAD'])).toBe(repo.base);
    // The whole remote, as a checkout would see it (lenient mode's history): later commits, tags, the PR ref.
    expect(gitSync(dir, ['log', '--all', '--format=%s'])).toContain('fix: the answer');
    expect(gitSync(dir, ['tag'])).toBe('v1.0');
    expect(gitSync(dir, ['rev-parse', 'refs/pull/1/head'])).toBe(repo.answerCommit);
    expect(JSON.parse(readFileSync(join(dir, '.flywheel-source.json'), 'utf8'))).toEqual({ kind: 'git', url: `file://${bare}`, commit: repo.base });
    // Cached: the same folder, no clone (the remote can be gone).
    const moved = `${bare}.moved`;
    execFileSync('mv', [bare, moved]);
    try {
      expect(await prepareTaskSource(t, { cacheDir })).toBe(dir);
    } finally {
      execFileSync('mv', [moved, bare]);
    }
    // Another commit of the same URL is another entry.
    expect(await prepareTaskSource(task({ kind: 'git', url: `file://${bare}`, commit: repo.answerCommit }), { cacheDir })).not.toBe(dir);
  });

  it('the fetched repository runs in the strict sandbox with its history out of reach', async () => {
    const dir = await prepareTaskSource(task({ kind: 'git', url: `file://${bare}`, commit: repo.base }), { cacheDir: join(work, 'cache-git') });
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb') });
    const session = await provider.open({ sourceDir: dir, baseCommit: repo.base, mode: 'strict', networkAllowList: [], limits: { commandTimeoutMs: 20_000, outputBytes: 65536 } });
    try {
      const r = await session.exec('git log --all --oneline | wc -l; cat src/calc.py; git cat-file -p ' + repo.answerCommit + ' 2>&1 | head -1');
      expect(r.stdout).toMatch(/^1\n/);
      expect(r.stdout).toContain('return None  # TODO');
      expect(r.stdout).not.toContain(ANSWER);
      expect(r.stdout).toMatch(/Not a valid object name|fatal/);
    } finally {
      await session.close();
    }
  });

  it('errors name the task and the field: a URL that does not clone, a commit that is not there, no cache folder', async () => {
    const cacheDir = join(work, 'cache-git-errors');
    await expect(prepareTaskSource(task({ kind: 'git', url: `file://${work}/nope.git`, commit: repo.base }), { cacheDir })).rejects.toThrow(
      /^task t\/1: repo\.url: git clone of file:\/\/.*nope\.git failed: .*(does not exist|not appear to be a git repository)/,
    );
    await expect(prepareTaskSource(task({ kind: 'git', url: `file://${bare}`, commit: 'deadbeef'.repeat(5) }), { cacheDir })).rejects.toThrow(
      `task t/1: repo.commit: commit ${'deadbeef'.repeat(5)} is not in file://${bare}`,
    );
    await expect(prepareTaskSource(task({ kind: 'local', path: join(work, 'missing') }))).rejects.toThrow(`task t/1: repo.path: ${join(work, 'missing')} is not a directory on this machine`);
    // A failed clone leaves nothing half-made in the cache.
    expect(execFileSync('find', [cacheDir, '-mindepth', '2']).toString()).toBe('');
  });
});

describe('bare repositories are cloned and checked out, never used in place', () => {
  it('a bare repository path as repo.url: a checkout at the commit in the cache, the bare repository untouched', async () => {
    const cacheDir = join(work, 'cache-bare');
    const before = execFileSync('find', [bare, '-newer', join(bare, 'HEAD')]).toString();
    const dir = await prepareTaskSource(task({ kind: 'git', url: bare, commit: repo.base }), { cacheDir });
    expect(dir).not.toBe(bare);
    expect(dir.startsWith(join(cacheDir, 'git'))).toBe(true);
    expect(gitSync(dir, ['rev-parse', 'HEAD'])).toBe(repo.base);
    expect(gitSync(dir, ['rev-parse', '--is-bare-repository'])).toBe('false');
    // Checked out: the base commit's files, and a clean status.
    expect(readFileSync(join(dir, 'src', 'calc.py'), 'utf8')).toContain('return None  # TODO');
    expect(gitSync(dir, ['status', '--porcelain'])).toBe('');
    expect(execFileSync('find', [bare, '-newer', join(bare, 'HEAD')]).toString()).toBe(before);
    // The same bare repository named by a relative path from a task file is the same clone.
    expect(await prepareTaskSource(task({ kind: 'git', url: 'remote.git', commit: repo.base }), { cacheDir, taskFile: join(work, 'task.json') })).not.toBe(bare);
  });

  it('a bare repository as a local path is cloned at its HEAD', async () => {
    const dir = await prepareTaskSource(task({ kind: 'local', path: bare }), { cacheDir: join(work, 'cache-bare') });
    expect(dir).not.toBe(bare);
    expect(gitSync(dir, ['rev-parse', 'HEAD'])).toBe(gitSync(bare, ['rev-parse', 'HEAD']));
  });

  it('a bare repository given as repo.url runs in the strict sandbox with one parentless commit and nothing else', async () => {
    const dir = await prepareTaskSource(task({ kind: 'git', url: bare, commit: repo.base }), { cacheDir: join(work, 'cache-bare') });
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-bare') });
    const session = await provider.open({ sourceDir: dir, baseCommit: repo.base, mode: 'strict', networkAllowList: [], limits: { commandTimeoutMs: 20_000, outputBytes: 65536 } });
    try {
      const r = await session.exec(`git log --all --format=%P | wc -l; git log --all --format=%P | tr -d '\n' | wc -c; git tag | wc -l; git branch -a | wc -l; git remote | wc -l; git cat-file -t ${repo.answerCommit} 2>&1 | head -1`);
      const [commits, parents, tags, branches, remotes, answer] = r.stdout.trim().split('\n');
      expect({ commits, parents, tags, remotes }).toEqual({ commits: '1', parents: '0', tags: '0', remotes: '0' });
      expect(Number(branches)).toBeLessThanOrEqual(1);
      expect(answer).toMatch(/fatal|Not a valid object/);
    } finally {
      await session.close();
    }
  });
});

describe('blob tarball sources', () => {
  it('a .tar.gz in the blobs port is extracted (one top-level folder is the root), cached by content, its commit checked', async () => {
    tar(work, ['-czf', join(work, 'repo.tgz'), '--transform', 's,^repo,calc-1.0,', 'repo']);
    await ports.blobs.put('tasks/calc.tgz', readFileSync(join(work, 'repo.tgz')));
    const cacheDir = join(work, 'cache-blob');
    const t = task({ kind: 'blob', key: 'tasks/calc.tgz', baseCommit: repo.base });
    const dir = await prepareTaskSource(t, { cacheDir, blobs: ports.blobs });
    expect(dir).toMatch(/\/blob\/[0-9a-f]{32}\/root\/calc-1\.0$/);
    expect(gitSync(dir, ['rev-parse', repo.base])).toBe(repo.base);
    expect(await prepareTaskSource(t, { cacheDir, blobs: ports.blobs })).toBe(dir);
    await expect(prepareTaskSource(task({ kind: 'blob', key: 'tasks/calc.tgz', baseCommit: 'abcdef1' }), { cacheDir, blobs: ports.blobs })).rejects.toThrow(
      'task t/1: repo.baseCommit: commit abcdef1 is not in the repository of blob tasks/calc.tgz',
    );
  });

  it('plain files (no .git) work without a base commit and are refused with one', async () => {
    const plain = join(work, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'a.py'), 'x = 1\n');
    writeFileSync(join(plain, 'b.py'), 'y = 2\n');
    tar(plain, ['-cf', join(work, 'plain.tar'), 'a.py', 'b.py']);
    await ports.blobs.put('tasks/plain.tar', readFileSync(join(work, 'plain.tar')));
    const dir = await prepareTaskSource(task({ kind: 'blob', key: 'tasks/plain.tar' }), { cacheDir: join(work, 'cache-blob'), blobs: ports.blobs });
    expect(readFileSync(join(dir, 'a.py'), 'utf8')).toBe('x = 1\n');
    await expect(prepareTaskSource(task({ kind: 'blob', key: 'tasks/plain.tar', baseCommit: repo.base }), { cacheDir: join(work, 'cache-blob'), blobs: ports.blobs })).rejects.toThrow(
      /repo\.baseCommit: blob tasks\/plain\.tar holds no \.git folder/,
    );
  });

  it('refuses members that would land outside the folder: ../ names, absolute or escaping symlinks', async () => {
    const evil = join(work, 'evil');
    mkdirSync(evil);
    writeFileSync(join(evil, 'ok.txt'), 'fine\n');
    symlinkSync('../../../etc', join(evil, 'up'));
    symlinkSync('/etc/passwd', join(evil, 'abs'));
    symlinkSync('sub/../ok.txt', join(evil, 'inside'));
    const cases: Array<[string, string[], RegExp]> = [
      ['dotdot.tar', ['-cf', join(work, 'dotdot.tar'), '--transform', 's,^ok,../ok,', 'ok.txt'], /member "\.\.\/ok\.txt" would be written outside the extraction folder/],
      ['up.tar', ['-cf', join(work, 'up.tar'), 'ok.txt', 'up'], /member "up" links outside the extraction folder \(\.\.\/\.\.\/\.\.\/etc\)/],
      ['abs.tar', ['-cf', join(work, 'abs.tar'), 'abs'], /member "abs" links outside the extraction folder \(\/etc\/passwd\)/],
    ];
    for (const [name, args, message] of cases) {
      tar(evil, args);
      await ports.blobs.put(`evil/${name}`, readFileSync(join(work, name)));
      await expect(prepareTaskSource(task({ kind: 'blob', key: `evil/${name}` }), { cacheDir: join(work, 'cache-evil'), blobs: ports.blobs })).rejects.toThrow(message);
    }
    // A link that stays inside is fine.
    tar(evil, ['-cf', join(work, 'inside.tar'), 'ok.txt', 'inside']);
    await ports.blobs.put('evil/inside.tar', readFileSync(join(work, 'inside.tar')));
    const dir = await prepareTaskSource(task({ kind: 'blob', key: 'evil/inside.tar' }), { cacheDir: join(work, 'cache-evil'), blobs: ports.blobs });
    expect(readFileSync(join(dir, 'ok.txt'), 'utf8')).toBe('fine\n');
    // Nothing was written next to the cache by the refused ones.
    expect(execFileSync('ls', ['-a', join(work, 'cache-evil')]).toString().split('\n').filter((n) => n.startsWith('ok'))).toEqual([]);
  });

  it('a missing blob, a blob that is not a tarball, and no blobs port are named', async () => {
    const cacheDir = join(work, 'cache-blob');
    await expect(prepareTaskSource(task({ kind: 'blob', key: 'tasks/none.tgz' }), { cacheDir, blobs: ports.blobs })).rejects.toThrow('task t/1: repo.key: no blob tasks/none.tgz');
    await ports.blobs.put('tasks/junk.tgz', 'this is not a tarball');
    await expect(prepareTaskSource(task({ kind: 'blob', key: 'tasks/junk.tgz' }), { cacheDir, blobs: ports.blobs })).rejects.toThrow(/repo\.key: blob tasks\/junk\.tgz is not a tarball tar can read/);
    await expect(prepareTaskSource(task({ kind: 'blob', key: 'tasks/calc.tgz' }), { cacheDir })).rejects.toThrow('task t/1: repo.key: a blob source needs the blobs port');
  });
});

describe('loadSuite with every kind of source', () => {
  it('local path, file:// git URL and blob tarball tasks load with their repositories on this machine', async () => {
    const suite = join(work, 'suite');
    mkdirSync(suite, { recursive: true });
    const base = { schemaVersion: 1, suite: 's', split: 'train', visibility: 'public', instruction: 'fix', testCommand: 'true', failToPass: ['a'] };
    writeFileSync(join(suite, 'a.json'), JSON.stringify({ ...base, id: 'a', repo: { kind: 'local', path: '../repo' } }));
    writeFileSync(join(suite, 'b.json'), JSON.stringify({ ...base, id: 'b', repo: { kind: 'git', url: `file://${bare}`, commit: repo.base } }));
    writeFileSync(join(suite, 'c.json'), JSON.stringify({ ...base, id: 'c', repo: { kind: 'blob', key: 'tasks/calc.tgz', baseCommit: repo.base } }));
    const cacheDir = join(work, 'cache-suite');
    const tasks = await loadSuite(suite, { cacheDir, blobs: ports.blobs });
    expect(tasks.map((t) => t.task.id)).toEqual(['a', 'b', 'c']);
    expect(tasks[0]!.sourceDir).toBe(repo.dir);
    expect(tasks[1]!.sourceDir.startsWith(join(cacheDir, 'git'))).toBe(true);
    expect(tasks[2]!.sourceDir.startsWith(join(cacheDir, 'blob'))).toBe(true);
    // Without a cache folder, fetched sources go to the default cache (never read in place); a blob task still needs the blobs port.
    await expect(loadSuite(suite)).rejects.toThrow('task c: repo.key: a blob source needs the blobs port');
  });
});
