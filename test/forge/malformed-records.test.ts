/**
 * A stored forge record that does not match its kind's schema fails where it is read, as a MalformedRecordError
 * naming the record and the field, never as a wrong value further on.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { exportSuite, listCandidateRecords } from '../../lib/forge/forge-records.ts';
import { candidateSk, forgeRunPk, suiteIndexPk, TASK_SK, taskIndexSk, taskPk } from '../../lib/forge/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';

let dir: string;
let ports: LocalPorts;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fw-forge-malformed-'));
  ports = openLocalPorts(join(dir, '.flywheel'));
});
afterEach(async () => {
  ports.close();
  await rm(dir, { recursive: true, force: true });
});

describe('malformed forge records', () => {
  it('a forged task whose failToPass is not a count fails the export, naming the field', async () => {
    const key = { pk: taskPk('calc', 'calc/add'), sk: TASK_SK };
    await ports.records.put({
      ...key,
      gsi1pk: suiteIndexPk('calc'),
      gsi1sk: taskIndexSk('calc/add'),
      kind: 'forge-task',
      suite: 'calc',
      taskId: 'calc/add',
      split: 'train',
      status: 'active',
      strategy: 'remove-function',
      runId: 'r1',
      failToPass: 'many',
      passToPass: 3,
      taskKey: 'forge/suites/calc/tasks/calc/add/task.json',
      removalPatchKey: 'forge/suites/calc/tasks/calc/add/removal.patch',
      referencePatchKey: 'forge/suites/calc/tasks/calc/add/reference.patch',
      logKey: 'forge/suites/calc/tasks/calc/add/certify.log',
      repoKey: 'forge/suites/calc/tasks/calc/add/repo.tar.gz',
      certifiedAt: '2026-12-02T10:00:00.000Z',
      updatedAt: '2026-12-02T10:00:00.000Z',
    });
    const read = exportSuite(ports, { suite: 'calc', dir: join(dir, 'suite'), reposDir: join(dir, 'repos') });
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', pk: key.pk, sk: key.sk, field: 'failToPass' });
  });

  it('a candidate record with an unknown status fails the listing, naming the field', async () => {
    const key = { pk: forgeRunPk('r1'), sk: candidateSk('c1') };
    await ports.records.put({ ...key, kind: 'forge-candidate', runId: 'r1', candidateId: 'c1', strategy: 's', files: [], symbols: [], status: 'maybe', verdict: 'maybe', durationMs: 1, at: '2026-12-02T10:00:00.000Z' });
    await expect(listCandidateRecords(ports.records, 'r1')).rejects.toMatchObject({ pk: key.pk, sk: key.sk, field: 'status' });
  });
});
