/**
 * A forge run records what certification learnt of the broken tree on every candidate: the failing share, the tests
 * dropped as flaky, the entry point; task ids name the entry point. Real namespace sandbox, node's test runner.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import { forgeRepository, type ForgeRunResult } from '../../../lib/forge/forge-repository.ts';
import { listCandidateRecords } from '../../../lib/forge/forge-records.ts';
import { parseForgeSpec } from '../../../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { CALC_TS, NODE_TEST_COMMAND, candidate, stubBody, writeRepo } from '../support/forge-fixtures.ts';
import { ADD_BODY, CORE_TS, FILES } from './certify-fixture.ts';

describe('forge run records (failing share, flaky drops, entry points)', () => {
  let repo: string;
  let data: string;
  let ports: LocalPorts;
  let result: ForgeRunResult;

  beforeAll(async () => {
    repo = await writeRepo(FILES);
    data = await mkdtemp(join(tmpdir(), 'fw-forge-certify-records-'));
    ports = openLocalPorts(join(data, '.flywheel'));
    const spec = parseForgeSpec({ name: 'calc', repo: { kind: 'local', path: repo }, testCommand: NODE_TEST_COMMAND, runner: { kind: 'node-test' }, k: 1, brokenRuns: 2, maxTasks: 5, env: { PASS_IN_SESSION: 'none' } });
    const profile = (entryPoint: string, path: string, source: string, body: string) => ({ entryPoint, isPublic: true, removedLines: 2, spans: [{ path, start: source.indexOf(body), end: source.indexOf(body) + body.length }] });
    result = await forgeRepository({
      spec,
      provider: new NamespaceSandboxProvider({ root: join(data, 'sandbox') }),
      ports,
      runId: 'records-run',
      candidates: async () => [
        candidate({
          id: 'group-add-multiply',
          strategy: 'function-group',
          // The group's first member is multiply's helper, add; its entry is multiply.
          symbols: ['src/calc.ts#add', 'src/calc.ts#multiply'],
          edits: [{ path: 'src/calc.ts', content: stubBody(CALC_TS, ...ADD_BODY) }],
          testFiles: ['test/calc.test.ts'],
          profile: profile('src/calc.ts#multiply', 'src/calc.ts', CALC_TS, ADD_BODY[1]),
        }),
        candidate({
          id: 'normalize-body',
          strategy: 'function-body',
          symbols: ['src/core.ts#normalize'],
          edits: [{ path: 'src/core.ts', content: stubBody(CORE_TS, 'export function normalize(x: number): number {\n', '  const size = Math.abs(x);\n  return size;\n') }],
          testFiles: ['test/core.test.ts'],
          profile: profile('src/core.ts#normalize', 'src/core.ts', CORE_TS, '  const size = Math.abs(x);\n  return size;\n'),
        }),
      ],
    });
  }, 180_000);

  afterAll(async () => {
    ports?.close();
    await rm(data, { recursive: true, force: true });
    await rm(repo, { recursive: true, force: true });
  });

  it('names the task after the entry point and records failing share and flaky drops on the candidate record', async () => {
    const stored = await listCandidateRecords(ports.records, 'records-run');
    const group = stored.find((r) => r.candidateId === 'group-add-multiply')!;
    expect(group).toMatchObject({ verdict: 'certified', entryPoint: 'src/calc.ts#multiply', flakyDropped: [] });
    expect(group.taskId).toMatch(/^calc\.function-group\.src-calc\.ts-multiply-/);
    // add adds, multiply multiplies and the fallback test (no session is PASS_IN_SESSION here): failing in both runs.
    expect(group.failingShare).toBeCloseTo(3 / 23);
    expect(group.failToPass).toHaveLength(3);
    expect(result.tasks.map((t) => t.taskId)).toEqual([group.taskId]);
  });

  it('records a suite-breaking deletion as rejected breaks-suite with its failing share, before any rerun', async () => {
    const stored = await listCandidateRecords(ports.records, 'records-run');
    const normalize = stored.find((r) => r.candidateId === 'normalize-body')!;
    expect(normalize).toMatchObject({ status: 'rejected', reason: 'breaks-suite', entryPoint: 'src/core.ts#normalize' });
    expect(normalize.failingShare).toBeCloseTo(20 / 23);
    expect(normalize.flakyDropped).toBeUndefined();
    expect(normalize.detail).toMatch(/^20 of 23 stable tests fail/);
  });
});
