/**
 * Rows the local drivers read are decoded by a schema per table: a row that does not match (a hand edit, a column
 * an older build wrote differently) fails where it is read with `Flywheel.MalformedRow`, naming the table and the
 * column, instead of flowing on as a wrong value.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEvents } from '../../lib/drivers/local/local-events.ts';
import { LocalJobs } from '../../lib/drivers/local/local-jobs.ts';
import { LocalWorkflows } from '../../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../../lib/drivers/local/sqlite-database.ts';
import { SqliteQueue } from '../../lib/drivers/local/sqlite-queue.ts';
import { SqliteRecords } from '../../lib/drivers/local/sqlite-records.ts';
import { MALFORMED_ROW, MalformedRowError } from '../../lib/drivers/local/sqlite-rows.ts';
import { tempDirs } from '../support/temp-dirs.ts';

const tempDir = tempDirs('fw-rows-');
const closing: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

function malformed(table: string, column: string) {
  return { name: `Flywheel.${MALFORMED_ROW}`, table, column };
}

describe('malformed rows', () => {
  it('jobs: a bad status or a spec that is not JSON names the table and column', async () => {
    const dataDir = tempDir();
    const jobs = new LocalJobs({ dataDir, run: false, definitions: { ok: { command: ['node', '-e', ''] } } });
    closing.push(() => jobs.close());
    const { jobId } = await jobs.submit({ name: 'j', definition: 'ok', category: 'research', pool: 'cpu' });
    const db = openDatabase(join(dataDir, 'jobs.sqlite'));
    closing.push(() => db.close());
    db.prepare("UPDATE jobs SET status = 'DONE-ISH' WHERE job_id = ?").run(jobId);
    await expect(jobs.describe(jobId)).rejects.toMatchObject(malformed('jobs', 'status'));
    db.prepare("UPDATE jobs SET status = 'RUNNABLE', spec = '{not json' WHERE job_id = ?").run(jobId);
    await expect(jobs.list()).rejects.toMatchObject(malformed('jobs', 'spec'));
    db.prepare(`UPDATE jobs SET spec = '{"timeoutSeconds":"soon"}' WHERE job_id = ?`).run(jobId);
    const error = await jobs.describe(jobId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MalformedRowError);
    expect(error).toMatchObject({ ...malformed('jobs', 'spec.timeoutSeconds'), message: expect.stringMatching(/^jobs row: column "spec\.timeoutSeconds": /) });
  });

  it('workflows, queue, events and records: each names its own table', async () => {
    const db = openDatabase(join(tempDir(), 'local.sqlite'));
    closing.push(() => db.close());
    const workflows = new LocalWorkflows(db, { echo: { definition: { StartAt: 'Done', States: { Done: { Type: 'Succeed' } } }, lambdas: {} } });
    closing.push(() => workflows.close());
    const { executionId } = await workflows.start('echo', { name: 'e1', input: {} });
    await workflows.waitFor(executionId);
    db.prepare("UPDATE workflow_executions SET runs = 'many' WHERE execution_id = ?").run(executionId);
    await expect(workflows.describe(executionId)).rejects.toMatchObject(malformed('workflow_executions', 'runs'));

    const queue = new SqliteQueue(db, 'q');
    await queue.send('hello');
    db.exec("UPDATE messages SET receive_count = 'x'");
    await expect(queue.receive()).rejects.toMatchObject(malformed('messages', 'receive_count'));

    const events = new LocalEvents(db);
    await events.publish([{ type: 't', detail: { a: 1 } }]);
    db.exec(`UPDATE events SET detail = '[1, 2]'`);
    expect(() => events.recent()).toThrow(expect.objectContaining(malformed('events', 'detail')));

    const records = new SqliteRecords(db);
    await records.put({ pk: 'P', sk: 'S' });
    db.exec(`UPDATE records SET item = '{"pk": 1, "sk": "S"}'`);
    await expect(records.get('P', 'S')).rejects.toMatchObject(malformed('records', 'item'));
  });
});
