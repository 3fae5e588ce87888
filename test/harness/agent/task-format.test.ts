import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { ValidationError } from '../../../lib/errors.ts';
import { exportHarborTask, importHarborTask } from '../../../lib/harness/task/harbor-task.ts';
import { loadTask } from '../../../lib/harness/task/load-task.ts';
import { importSweBenchInstance } from '../../../lib/harness/task/swe-bench-task.ts';
import { parseTask, type TaskInput } from '../../../lib/harness/task/task-schema.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fw-task-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const valid: TaskInput = {
  schemaVersion: 1,
  id: 'calc-add-1',
  suite: 'forge-calc',
  split: 'train',
  visibility: 'private',
  repo: { kind: 'git', url: 'https://example.com/calc.git', commit: 'abc1234' },
  instruction: 'Make add() add.',
  setupCommand: 'npm ci',
  testCommand: 'npx vitest run --reporter=junit',
  failToPass: ['test/add.test.ts > adds'],
  passToPass: ['test/sub.test.ts > subtracts'],
  testFiles: ['test/add.test.ts', 'vitest.config.ts'],
  limits: { turns: 30, tokens: 500_000, wallClockSeconds: 600, outputBytes: 1_000_000, costUsd: 2 },
  networkAllowList: ['registry.npmjs.org'],
};

describe('task schema', () => {
  it('accepts a valid task and fills defaults', () => {
    const task = parseTask({ ...valid, limits: undefined, passToPass: undefined });
    expect(task.limits).toEqual({ wallClockSeconds: 1800, turns: 50, tokens: 2_000_000, outputBytes: 10_000_000, commandSeconds: 300 });
    expect(task.passToPass).toEqual([]);
    expect(task.metadata).toEqual({});
  });

  it('names every offending field', () => {
    let error: unknown;
    try {
      parseTask({ ...valid, schemaVersion: 2, split: 'test', repo: { kind: 'git', url: 'x', commit: 'not-a-sha' }, limits: { turns: -1 }, instruction: '' }, 'bad.json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.name).toBe('Flywheel.ValidationError');
    expect(v.issues.map((i) => i.path).sort()).toEqual(['instruction', 'limits.turns', 'repo.commit', 'schemaVersion', 'split']);
    expect(v.message).toMatch(/^bad\.json is not a valid task/);
  });

  it('rejects an unknown repo kind and a missing test command', () => {
    expect(() => parseTask({ ...valid, repo: { kind: 'svn', url: 'x' }, testCommand: undefined })).toThrow(/repo\.kind.*testCommand|testCommand.*repo\.kind/);
  });

  it('loads from a file, validating on load', async () => {
    await writeFile(join(dir, 'ok.json'), JSON.stringify(valid));
    await writeFile(join(dir, 'bad.json'), '{"schemaVersion":1');
    expect((await loadTask(join(dir, 'ok.json'))).id).toBe('calc-add-1');
    await expect(loadTask(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not valid JSON/);
  });
});

describe('Harbor / Terminal-Bench task folders', () => {
  it('export then import gives the same task; the folder has instruction.md, task.toml, tests/test.sh writing the reward', async () => {
    const task = parseTask({ ...valid, goldPatch: 'diff --git a/x b/x\n', metadata: { difficulty: 'easy' } });
    const folder = join(dir, 'calc-add-1');
    await exportHarborTask(task, folder, { 'tests/add.test.ts': 'test("adds", () => {});\n' });
    expect(await readFile(join(folder, 'instruction.md'), 'utf8')).toBe('Make add() add.');
    const toml = parseToml(await readFile(join(folder, 'task.toml'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(toml['version']).toBe('1.0');
    expect(toml['agent']).toEqual({ timeout_sec: 600 });
    expect(toml['verifier']).toEqual({ timeout_sec: 300 });
    expect(toml['metadata']!['difficulty']).toBe('easy');
    const testSh = await readFile(join(folder, 'tests', 'test.sh'), 'utf8');
    expect(testSh).toContain('/logs/verifier/reward.txt');
    expect(testSh).toContain(task.testCommand);
    expect(await readFile(join(folder, 'tests', 'add.test.ts'), 'utf8')).toContain('adds');
    expect(await importHarborTask(folder)).toEqual(task);
  });

  it('the exported verifier writes 1 or 0 to the reward file', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const [command, reward] of [['true', '1'], ['false', '0']] as const) {
      const folder = join(dir, `t-${reward}`);
      await exportHarborTask(parseTask({ ...valid, testCommand: command }), folder);
      const rewardFile = join(dir, `reward-${reward}.txt`);
      execFileSync('bash', [join(folder, 'tests', 'test.sh')], { env: { ...process.env, REWARD_FILE: rewardFile } });
      expect((await readFile(rewardFile, 'utf8')).trim()).toBe(reward);
    }
  });

  it('imports a plain Harbor folder (no Flywheel metadata) with defaults', async () => {
    const folder = join(dir, 'hello-world');
    await mkdir(join(folder, 'tests'), { recursive: true });
    await mkdir(join(folder, 'environment'), { recursive: true });
    await writeFile(join(folder, 'instruction.md'), 'Create hello.txt containing "Hello, world!".\n');
    await writeFile(join(folder, 'task.toml'), 'version = "1.0"\n[metadata]\ndifficulty = "easy"\ntags = ["trivial"]\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 240.0\n[environment]\ncpus = 1\n');
    await writeFile(join(folder, 'tests', 'test.sh'), '#!/bin/bash\ntest -f hello.txt && echo 1 > /logs/verifier/reward.txt\n');
    await writeFile(join(folder, 'tests', 'test_state.py'), 'def test_hello(): pass\n');
    await writeFile(join(folder, 'environment', 'Dockerfile'), 'FROM alpine\n');
    const task = await importHarborTask(folder, { suite: 'terminal-bench' });
    expect(task).toMatchObject({
      id: 'hello-world',
      suite: 'terminal-bench',
      split: 'held-out',
      visibility: 'public',
      repo: { kind: 'local', path: join(folder, 'environment') },
      testCommand: 'bash tests/test.sh',
      failToPass: ['tests/test.sh'],
      testFiles: ['tests/test.sh', 'tests/test_state.py'],
      limits: { wallClockSeconds: 240 },
      metadata: { difficulty: 'easy', tags: ['trivial'] },
      origin: { kind: 'harbor' },
    });
  });

  it('a folder without task.toml or instruction.md is rejected naming both', async () => {
    await expect(importHarborTask(dir)).rejects.toMatchObject({ issues: [{ path: 'task.toml' }, { path: 'instruction.md' }] });
  });
});

describe('SWE-bench instances', () => {
  const row = {
    instance_id: 'astropy__astropy-12907',
    repo: 'astropy/astropy',
    base_commit: 'd16bfe05a744909de4b27f5875fe0d4ed41ce607',
    problem_statement: 'Modeling separability_matrix does not compute separability correctly for nested CompoundModels',
    FAIL_TO_PASS: '["astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]"]',
    PASS_TO_PASS: '["astropy/modeling/tests/test_separable.py::test_coord_matrix"]',
    test_patch: 'diff --git a/astropy/modeling/tests/test_separable.py b/astropy/modeling/tests/test_separable.py\n--- a/astropy/modeling/tests/test_separable.py\n+++ b/astropy/modeling/tests/test_separable.py\n@@ -1 +1 @@\n-a\n+b\n',
    patch: 'diff --git a/astropy/modeling/separable.py b/astropy/modeling/separable.py\n',
    version: '4.3',
    environment_setup_commit: '298ccb478e6bf092953bca67a3d29dc6c35f6752',
  };

  it('imports an instance: repo at base_commit, test ids decoded, test files from the test patch', () => {
    const task = importSweBenchInstance(row, { suite: 'swe-bench-verified' });
    expect(task).toMatchObject({
      id: 'astropy__astropy-12907',
      suite: 'swe-bench-verified',
      repo: { kind: 'git', url: 'https://github.com/astropy/astropy.git', commit: row.base_commit },
      instruction: row.problem_statement,
      failToPass: ['astropy/modeling/tests/test_separable.py::test_separable[compound_model6-result6]'],
      passToPass: ['astropy/modeling/tests/test_separable.py::test_coord_matrix'],
      testFiles: ['astropy/modeling/tests/test_separable.py'],
      testPatch: row.test_patch,
      goldPatch: row.patch,
      origin: { kind: 'swe-bench', ref: 'astropy__astropy-12907' },
      metadata: { repo: 'astropy/astropy', version: '4.3', environmentSetupCommit: row.environment_setup_commit },
    });
    expect(task.testCommand).toBe('python -m pytest -rA astropy/modeling/tests/test_separable.py');
  });

  it('accepts arrays as well as JSON strings, and names bad fields', () => {
    expect(importSweBenchInstance({ ...row, FAIL_TO_PASS: ['a::b'], PASS_TO_PASS: [] }).failToPass).toEqual(['a::b']);
    expect(() => importSweBenchInstance({ ...row, FAIL_TO_PASS: 'not json', base_commit: 'zzz' })).toThrow(/FAIL_TO_PASS: a JSON array of test ids.*|base_commit/);
    try {
      importSweBenchInstance({ ...row, FAIL_TO_PASS: 'not json', base_commit: 'zzz' });
    } catch (e) {
      expect((e as ValidationError).issues.map((i) => i.path).sort()).toEqual(['FAIL_TO_PASS', 'base_commit']);
    }
  });
});
